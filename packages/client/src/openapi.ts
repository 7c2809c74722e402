/**
 * The API's wire types, generated from its OpenAPI document by `npm run api:generate`
 * (tools/generate/openapi-types.ts). Do not edit: change the server's schemas and
 * regenerate; test/generated.test.ts fails when this file is stale.
 */
export interface paths {
    "/v1/cv/requests/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Recognise objects in one image, synchronously
         * @description Idempotent on (API key, external_id): a repeat with the same image replays the stored result (header Idempotent-Replayed: true, no quota or balance use); while the first is processing: 409; with a different image: 422; after an ERROR the image is processed again as a new request. A replay answers the stored result whatever its own min_confidence, max_results and classes.
         */
        post: operations["createSyncCvRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cv/requests/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Recognise objects in 1 to 10 images by URL, concurrently
         * @description Each image becomes its own request. One image failing never fails the batch: its entry is FAILED. min_confidence, max_results and classes apply to every image.
         */
        post: operations["createBatchCvRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cv/requests/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Status and result of an earlier request
         * @description Only the API key that made the request may read it (another key: 403).
         */
        get: operations["getRequest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cv/feedback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rate an earlier request: -1 bad, 0 neutral, 1 good
         * @description A new rating replaces the current one; every rating is kept in the history. Another key's request is 404.
         */
        post: operations["submitFeedback"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in with e-mail and password
         * @description Returns an access token and a refresh token, or for an account with two-factor authentication `{"mfa_required":true,"mfa_token","mfa_expires_in","methods"}` (no session yet: POST /auth/mfa). With header `x-console-session: cookie` (the web app) they are set as HttpOnly cookies instead.
         */
        post: operations["consoleLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/auth/mfa": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Second step of a sign-in with two-factor authentication: the challenge and a code
         * @description After a right password, an account with TOTP gets `{"mfa_required":true,"mfa_token"}` from /auth/login instead of tokens. This call, with that token (single use, 5 minutes) and a current code or a recovery code, answers like a sign-in. Wrong codes are throttled per account and per address (LOGIN_THROTTLED).
         */
        post: operations["consoleLoginSecondFactor"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/auth/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a refresh token for a new pair (the old refresh token is spent)
         * @description Presenting a spent refresh token answers REFRESH_REUSED and revokes the whole session, except within 20 s of its exchange (two tabs refreshing at once), when it gets the same new pair again. A session ends 12 h after sign-in and after 30 min without activity by default (UNAUTHENTICATED, saying which). Browsers send no body: the refresh cookie and x-csrf-token are used.
         */
        post: operations["consoleRefresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign out: revokes the current session (every token of it)
         * @description Authenticated by the bearer access token, or by {"refresh_token"} in the body, or by the browser cookies (with x-csrf-token).
         */
        post: operations["consoleLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in user and their organisations
         * @description `password_must_change: true`: the password was set by an operator; every other route answers 403 PASSWORD_CHANGE_REQUIRED until it is changed (POST /me/password).
         */
        get: operations["consoleGetMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change your password: every session ends, this client gets a new one
         * @description In one transaction with the change, every session of the user is revoked (this one included), a temporary password (`password_must_change`) stops being one, and a new session is started for the caller, answered like a sign-in (cookies for a browser session). Sessions signed in before the change are refused from then on.
         */
        post: operations["consoleChangePassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your live sessions */
        get: operations["consoleListSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/sessions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke one of your sessions */
        delete: operations["consoleRevokeSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your account's security log, newest first, filtered; or all of it as JSON lines
         * @description Sign-ins, failed and throttled sign-ins, sign-outs, password changes, session revocations and refresh-token reuse of the signed-in account. The filters and `format=jsonl` of the organisation audit log.
         */
        get: operations["consoleGetSecurityLog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/mfa": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your second factor: none, pending (enrollment not confirmed) or active, and recovery codes left */
        get: operations["consoleGetMfa"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/mfa/totp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start TOTP enrollment (needs the password): a new secret, active only once confirmed with a code */
        post: operations["consoleStartTotp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/mfa/totp/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Confirm enrollment with a current code: TOTP becomes active; the 10 recovery codes are in this answer only */
        post: operations["consoleConfirmTotp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/mfa/totp/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Turn TOTP off: needs the password and a current code or a recovery code */
        post: operations["consoleDisableTotp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/me/mfa/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Confirm with a current code (or a recovery code): this session counts as freshly checked for 10 minutes (creating keys needs it) */
        post: operations["consoleVerifyMfa"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/mfa": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the organisation requires two-factor authentication (every member) */
        get: operations["consoleGetOrgMfa"];
        /** Require two-factor authentication of every member, or stop requiring it (owners) */
        put: operations["consoleSetOrgMfa"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organisation (every member) */
        get: operations["consoleGetOrg"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organisation's API keys */
        get: operations["consoleListKeys"];
        put?: never;
        /** Create a key; its secret is in this answer only */
        post: operations["consoleCreateKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One key */
        get: operations["consoleGetKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change a key */
        patch: operations["consoleUpdateKey"];
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys/{id}/suspend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Suspend a key */
        post: operations["consoleSuspendKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys/{id}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a key */
        post: operations["consoleResumeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke a key (final) */
        post: operations["consoleRevokeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Requests per day (DONE, ERROR, refused), quota and balance */
        get: operations["consoleGetUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/keys/{id}/requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A key's latest requests */
        get: operations["consoleListKeyRequests"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/feedback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Feedback ratings (-1 bad, 0 neutral, 1 good) per label and per day */
        get: operations["consoleGetFeedback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Members and their roles */
        get: operations["consoleListMembers"];
        put?: never;
        /**
         * Invite a member: a one-time link, e-mailed to the invitee (SMTP configured) or shown only in this answer
         * @description Creates an invitation; the invitee sets their own password (no account yet) or accepts as their existing account. The answer is the same whether or not the e-mail has an account. An earlier pending invitation of the same e-mail here is revoked. With SMTP configured (SMTP_URL) the link is e-mailed to the invitee and is not in the answer (`delivered: "email"`); a failed send creates nothing and answers 503 SERVICE_UNAVAILABLE with Retry-After (400 VALIDATION_FAILED when the mail server refuses the address). Without SMTP the answer has the link, once (`delivered: "link"`, `invitation_url`).
         */
        post: operations["consoleInviteMember"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Pending invitations (owners and admins) */
        get: operations["consoleListInvitations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/invitations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a pending invitation (an owner for an owner invitation) */
        delete: operations["consoleRevokeInvitation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/members/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a member (or leave); the last owner stays */
        delete: operations["consoleRemoveMember"];
        options?: never;
        head?: never;
        /** Change a member's role */
        patch: operations["consoleChangeMember"];
        trace?: never;
    };
    "/console/api/v1/orgs/{org}/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit log, newest first, filtered; or all of it as JSON lines (owners and admins)
         * @description Filters: `action` (comma-separated, `key.*` for a prefix), `actor` (e-mail or user id; `recog CLI` for the server CLI), `since` (inclusive) and `until` (exclusive) as ISO-8601 date-times, `before` (an entry id: older ones, for paging). `format=jsonl` answers every matching entry, one JSON object per line (`application/x-ndjson`), streamed; `limit` and `before` still apply when given.
         */
        get: operations["consoleGetAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/invitations/inspect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** What an invitation link is for (no session needed) */
        post: operations["consoleInspectInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/api/v1/invitations/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Accept an invitation (single use)
         * @description No account for the e-mail yet: send `new_password`; the account is created with it and joined to the organisation in one transaction. An existing account: be signed in as it (bearer, or cookies with x-csrf-token), or send its `password` (not for an account with a second factor: 403 MFA_CHECK_REQUIRED, sign in first). Then sign in as usual.
         */
        post: operations["consoleAcceptInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** BoundingBox */
        BoundingBox: {
            /** @description X of the top-left corner, pixels of the original image. */
            x: number;
            /** @description Y of the top-left corner. */
            y: number;
            width: number;
            height: number;
        };
        /** Detection */
        Detection: {
            /** @description Detected product label. */
            label: string;
            /** @description External id of the detected product (model catalog). */
            external_id: string;
            bounding_box: components["schemas"]["BoundingBox"];
            /** @description Extension: detection score. */
            confidence: number;
        };
        /** CVResult */
        CVResult: {
            /** @description True exactly when status is DONE. */
            success: boolean;
            /** Format: uuid */
            request_id: string;
            /** @description Echo of the client-provided id: the sync request's external_id, or for a batch image its batch's id (the batch external_id, or the batch_id the service assigned when none was sent). Empty only for batch images stored before batches were given an id. */
            external_id: string;
            status: "QUEUED" | "PROCESSING" | "DONE" | "ERROR";
            /** @description Signed, expiring address of the stored image: the API link, or a presigned S3 URL with IMAGE_URL_MODE=presigned (or the submitted URL, as sent, when it could not be fetched). */
            image_url: string;
            /** @description Empty unless DONE. */
            results: components["schemas"]["Detection"][];
            /** @description Set when status is ERROR. */
            error?: string;
            /** @description HTTP status of the recognition step (200 when DONE; upstream status of a failed download; 408 on timeout). */
            response_code?: number;
            /** @description Extension. */
            processing_time_ms?: number;
            /** @description Extension: the model that produced the results. */
            model?: {
                name: string;
                version: string;
            };
        };
        /** BatchImageResult */
        BatchImageResult: {
            /** @description The URL as submitted. */
            image_url: string;
            /** @description Null if the image failed before processing. */
            request_id: string | null;
            status: "DONE" | "FAILED";
            success: boolean;
            error: string | null;
            results: components["schemas"]["Detection"][];
            response_code: number | null;
        };
        /** BatchCVResult */
        BatchCVResult: {
            success: boolean;
            /** @description The batch's external_id as sent; when none was sent, an id the service assigned (a UUID). Each image's request carries it as its external_id. */
            batch_id: string;
            total_images: number;
            results: components["schemas"]["BatchImageResult"][];
        };
        /** FeedbackResult */
        FeedbackResult: {
            /** @enum {string} */
            status: "success";
            message: string;
            request_id: string;
            /** @enum {integer} */
            rating: -1 | 0 | 1;
        };
        /**
         * ConsoleRole
         * @description A member's role, listed lowest first (its rank is its place in this list): each may do what the ones before it may. Least role: read viewer, manage keys member, manage members and read the audit log admin; only an owner changes or makes an owner.
         * @enum {string}
         */
        ConsoleRole: "viewer" | "member" | "admin" | "owner";
        /** ConsoleUser */
        ConsoleUser: {
            /** Format: uuid */
            id: string;
            email: string;
        };
        /**
         * ConsoleSessionTokens
         * @description A new session: its tokens in the body (programs) or in cookies (browsers).
         */
        ConsoleSessionTokens: {
            /** @description Absent for a browser (x-console-session: cookie): it is in an HttpOnly cookie. */
            access_token?: string;
            /** @description Seconds the access token lives. */
            access_expires_in: number;
            /** @description Absent for a browser: it is in an HttpOnly cookie. */
            refresh_token?: string;
            /** @description Seconds the refresh token lives. */
            refresh_expires_in: number;
            /** @enum {string} */
            token_type: "Bearer";
            user: components["schemas"]["ConsoleUser"];
        };
        /**
         * ConsoleMfaChallenge
         * @description The password was right; the account has a second factor, so no session yet.
         */
        ConsoleMfaChallenge: {
            /** @enum {boolean} */
            mfa_required: true;
            /** @description Single use; send it with a code to POST /auth/mfa. */
            mfa_token: string;
            /** @description Seconds the challenge lives. */
            mfa_expires_in: number;
            methods: ("totp" | "recovery_code")[];
        };
        /** ConsoleMembership */
        ConsoleMembership: {
            org: {
                /** Format: uuid */
                id: string;
                name: string;
            };
            role: components["schemas"]["ConsoleRole"];
        };
        /** ConsoleMe */
        ConsoleMe: {
            user: components["schemas"]["ConsoleUser"];
            memberships: components["schemas"]["ConsoleMembership"][];
            /** @description The password was set by an operator: every other route answers 403 PASSWORD_CHANGE_REQUIRED until it is changed. */
            password_must_change: boolean;
        };
        /** ConsoleSession */
        ConsoleSession: {
            /** Format: uuid */
            id: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            last_used_at: string;
            /**
             * Format: date-time
             * @description When it ends at the latest (idle sessions end earlier).
             */
            expires_at: string;
            user_agent: string | null;
            ip: string | null;
            /** @description The session of this request. */
            current: boolean;
        };
        /**
         * ConsoleOrganization
         * @description The organisation and the caller's role in it.
         */
        ConsoleOrganization: {
            /** Format: uuid */
            id: string;
            name: string;
            status: "active" | "suspended";
            balance: number | null;
            /** Format: date-time */
            created_at: string;
            role: components["schemas"]["ConsoleRole"];
        };
        /** ConsoleKey */
        ConsoleKey: {
            /** Format: uuid */
            id: string;
            name: string;
            description: string | null;
            /** @description The first characters of the secret, to recognise it. */
            prefix: string;
            status: "active" | "suspended" | "revoked";
            /** @description Labels of the model catalog, or ["*"] for all. */
            classes: string[];
            monthly_quota: number;
            /** @description Calls counted this UTC month. */
            used_this_month: number;
            /** @description The key's own limit, or the service default. */
            rate_limit_per_minute: number;
            /** @description True when the key has no limit of its own. */
            rate_limit_is_default: boolean;
            last_used_at: string | null;
            /** Format: date-time */
            created_at: string;
            expires_at: string | null;
        };
        /** ConsoleUsage */
        ConsoleUsage: {
            /** @description One entry per day, oldest first, today last. */
            days: {
                /** @description UTC day */
                date: string;
                done: number;
                error: number;
                /** @description Calls the limits refused (rate, quota, balance). */
                refused: number;
            }[];
            /** @description This month: of the key, or of the organisation's live keys. */
            quota: {
                /** @description YYYY-MM, UTC */
                month: string;
                limit: number;
                used: number;
            };
            balance: number | null;
        };
        /** ConsoleFeedback */
        ConsoleFeedback: {
            by_label: {
                label: string;
                bad: number;
                neutral: number;
                good: number;
            }[];
            /** @description One entry per day, oldest first. */
            by_day: {
                /** @description UTC day */
                date: string;
                bad: number;
                neutral: number;
                good: number;
            }[];
        };
        /** ConsoleRequest */
        ConsoleRequest: {
            /** Format: uuid */
            id: string;
            external_id: string | null;
            /** @description sync or batch */
            kind: string;
            status: "QUEUED" | "PROCESSING" | "DONE" | "ERROR";
            /** Format: date-time */
            created_at: string;
            processing_time_ms: number | null;
            image_url: string | null;
            results: components["schemas"]["Detection"][];
            error: string | null;
            response_code: number | null;
            feedback: number | null;
        };
        /** ConsoleMember */
        ConsoleMember: {
            user: components["schemas"]["ConsoleUser"];
            role: components["schemas"]["ConsoleRole"];
            /** Format: date-time */
            created_at: string;
        };
        /**
         * ConsoleInvitation
         * @description A pending invitation, as the organisation sees it.
         */
        ConsoleInvitation: {
            /** Format: uuid */
            id: string;
            email: string;
            role: components["schemas"]["ConsoleRole"];
            invited_by: {
                id: string | null;
                email: string;
            };
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string;
        };
        /**
         * ConsoleInvitationInfo
         * @description What an invitation link is for, as its holder sees it.
         */
        ConsoleInvitationInfo: {
            org: {
                name: string;
            };
            email: string;
            role: components["schemas"]["ConsoleRole"];
            /** @description The inviter's e-mail. */
            invited_by: string;
            /** Format: date-time */
            expires_at: string;
            /** @description No account has the e-mail yet: accepting sets its password. */
            new_account: boolean;
        };
        /** ConsoleAuditEntry */
        ConsoleAuditEntry: {
            /** @description Increasing; `before` pages by it. */
            id: number;
            /** Format: date-time */
            created_at: string;
            org_id: string | null;
            user_id: string | null;
            actor: {
                id: string | null;
                email: string;
            };
            /** @description Such as key.create or session.login. */
            action: string;
            target: {
                type: string;
                id: string;
                name: string | null;
            };
            /** @description Depends on the action. */
            details: {
                [key: string]: unknown;
            };
            ip: string | null;
        };
        /** ConsoleMfaStatus */
        ConsoleMfaStatus: {
            /** @description pending: enrolled, not yet confirmed with a code */
            totp: "none" | "pending" | "active";
            recovery_codes_left: number;
            /** @description This session passed a second-factor check recently (creating keys needs it). */
            session_verified_recently: boolean;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createSyncCvRequest: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A replay (the same API key, external_id and image as an earlier DONE request) answers the stored result whatever this request's min_confidence, max_results and classes: the idempotency fingerprint is the image's alone. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description Client-provided identifier: 1 to 255 characters (Unicode code points), no control characters, no lone UTF-16 surrogates (400 INVALID_EXTERNAL_ID). */
                    external_id: string;
                    /** @description Only detections with confidence >= this, 0 to 1 (400 INVALID_PARAMETERS). The detector already drops boxes under the service's score threshold (SCORE_THRESHOLD, or a class's own threshold in the model catalog), so a lower value returns what the default returns. */
                    min_confidence?: number;
                    /** @description At most this many detections, 1 to 100 (400 INVALID_PARAMETERS): the highest confidence first, ties in the detector's order. */
                    max_results?: number;
                    /** @description Only detections of these labels: 1 to 100 unique, non-empty labels of at most 100 characters (400 INVALID_PARAMETERS). It narrows the API key's classes, never widens them: a label the key may not see, or (for a key with all classes) one not in the model catalog, is 400 INVALID_PARAMETERS naming it. */
                    classes?: string[];
                } & ({
                    /** @description URL of the image: at most 2048 characters (Unicode code points), no lone UTF-16 surrogates (400 INVALID_IMAGE_URL). Any such string passes this schema; one that is not an absolute http(s) URL of a public address (no credentials, no control characters, a host that resolves to a public address) is 400 INVALID_IMAGE_URL. */
                    image_url: string;
                } | {
                    /** @description Base64 image (JPEG, PNG, WebP, GIF), optionally with a data:<mime>;base64, prefix; at most 10 MB encoded (400 IMAGE_TOO_LARGE). Standard alphabet (RFC 4648), whitespace allowed; empty data, or data that is not base64, is 400 INVALID_IMAGE_BASE64. */
                    image_base64: string;
                });
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CVResult"];
                };
            };
            /** @description INVALID_PARAMETERS: Invalid or missing parameters; INVALID_EXTERNAL_ID: external_id must be 1 to 255 characters without control characters; INVALID_IMAGE_URL: image_url must be a public http or https URL of at most 2048 characters; INVALID_IMAGE_BASE64: image_base64 is not valid base64 data; UNSUPPORTED_IMAGE_FORMAT: Unsupported image format: send JPEG, PNG, WebP or GIF; IMAGE_TOO_LARGE: The image is too large */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_PARAMETERS" | "INVALID_EXTERNAL_ID" | "INVALID_IMAGE_URL" | "INVALID_IMAGE_BASE64" | "UNSUPPORTED_IMAGE_FORMAT" | "IMAGE_TOO_LARGE";
                    };
                };
            };
            /** @description MISSING_API_KEY: Missing API key: send it in the x-api-key header; INVALID_API_KEY: Invalid API key; API_KEY_EXPIRED: The API key has expired */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "MISSING_API_KEY" | "INVALID_API_KEY" | "API_KEY_EXPIRED";
                    };
                };
            };
            /** @description INSUFFICIENT_BALANCE: Insufficient API calls balance */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "payment_required";
                        message: string;
                        /** @enum {string} */
                        error_code: "INSUFFICIENT_BALANCE";
                    };
                };
            };
            /** @description KEY_SUSPENDED: The API key is suspended; KEY_REVOKED: The API key has been revoked; ORGANIZATION_SUSPENDED: The API key's organisation is suspended; NO_CLASSES: No classes are mapped to this API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "KEY_SUSPENDED" | "KEY_REVOKED" | "ORGANIZATION_SUSPENDED" | "NO_CLASSES";
                    };
                };
            };
            /** @description PROCESSING_TIMEOUT: Processing timed out */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Request Timeout";
                        message: string;
                        /** @enum {string} */
                        error_code: "PROCESSING_TIMEOUT";
                        external_id?: string;
                    };
                };
            };
            /** @description REQUEST_IN_PROGRESS: A request with this external_id is still processing; retry later */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_in_progress";
                        message: string;
                        /** @enum {string} */
                        error_code: "REQUEST_IN_PROGRESS";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description IDEMPOTENCY_KEY_REUSED: This external_id was already used with a different image */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "idempotency_key_reused";
                        message: string;
                        /** @enum {string} */
                        error_code: "IDEMPOTENCY_KEY_REUSED";
                    };
                };
            };
            /** @description RATE_LIMITED: Rate limit exceeded; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address; MONTHLY_QUOTA_EXCEEDED: Monthly quota exceeded */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "RATE_LIMITED" | "TOO_MANY_IN_FLIGHT" | "MONTHLY_QUOTA_EXCEEDED";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly; SERVICE_OVERLOADED: The service is at capacity; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE" | "SERVICE_OVERLOADED";
                    };
                };
            };
        };
    };
    createBatchCvRequest: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    image_urls: string[];
                    /** @description Tracking id of the batch, not idempotent, returned as batch_id (without it the service assigns one): 1 to 255 characters (Unicode code points), no control characters, no lone UTF-16 surrogates (400 INVALID_EXTERNAL_ID). */
                    external_id?: string;
                    /** @description Only detections with confidence >= this, 0 to 1 (400 INVALID_PARAMETERS). The detector already drops boxes under the service's score threshold (SCORE_THRESHOLD, or a class's own threshold in the model catalog), so a lower value returns what the default returns. */
                    min_confidence?: number;
                    /** @description At most this many detections, 1 to 100 (400 INVALID_PARAMETERS): the highest confidence first, ties in the detector's order. */
                    max_results?: number;
                    /** @description Only detections of these labels: 1 to 100 unique, non-empty labels of at most 100 characters (400 INVALID_PARAMETERS). It narrows the API key's classes, never widens them: a label the key may not see, or (for a key with all classes) one not in the model catalog, is 400 INVALID_PARAMETERS naming it. */
                    classes?: string[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchCVResult"];
                };
            };
            /** @description INVALID_PARAMETERS: Invalid or missing parameters; INVALID_EXTERNAL_ID: external_id must be 1 to 255 characters without control characters; MISSING_IMAGE_URLS: image_urls is required and must contain 1 to 10 URLs; TOO_MANY_IMAGES: Too many images: the maximum is 10 per batch */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request" | "invalid_request";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_PARAMETERS" | "INVALID_EXTERNAL_ID" | "MISSING_IMAGE_URLS" | "TOO_MANY_IMAGES";
                    };
                };
            };
            /** @description MISSING_API_KEY: Missing API key: send it in the x-api-key header; INVALID_API_KEY: Invalid API key; API_KEY_EXPIRED: The API key has expired */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "MISSING_API_KEY" | "INVALID_API_KEY" | "API_KEY_EXPIRED";
                    };
                };
            };
            /** @description INSUFFICIENT_BALANCE: Insufficient API calls balance */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "payment_required";
                        message: string;
                        /** @enum {string} */
                        error_code: "INSUFFICIENT_BALANCE";
                    };
                };
            };
            /** @description KEY_SUSPENDED: The API key is suspended; KEY_REVOKED: The API key has been revoked; ORGANIZATION_SUSPENDED: The API key's organisation is suspended; NO_CLASSES: No classes are mapped to this API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "KEY_SUSPENDED" | "KEY_REVOKED" | "ORGANIZATION_SUSPENDED" | "NO_CLASSES";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description RATE_LIMITED: Rate limit exceeded; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address; MONTHLY_QUOTA_EXCEEDED: Monthly quota exceeded */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "RATE_LIMITED" | "TOO_MANY_IN_FLIGHT" | "MONTHLY_QUOTA_EXCEEDED";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    getRequest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The request id returned by a submission. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CVResult"];
                };
            };
            /** @description INVALID_REQUEST_ID: A valid request id (UUID) is required */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "missing_request_id";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_REQUEST_ID";
                    };
                };
            };
            /** @description MISSING_API_KEY: Missing API key: send it in the x-api-key header; INVALID_API_KEY: Invalid API key; API_KEY_EXPIRED: The API key has expired */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "MISSING_API_KEY" | "INVALID_API_KEY" | "API_KEY_EXPIRED";
                    };
                };
            };
            /** @description KEY_SUSPENDED: The API key is suspended; KEY_REVOKED: The API key has been revoked; ORGANIZATION_SUSPENDED: The API key's organisation is suspended; REQUEST_FORBIDDEN: The request belongs to a different API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden" | "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "KEY_SUSPENDED" | "KEY_REVOKED" | "ORGANIZATION_SUSPENDED" | "REQUEST_FORBIDDEN";
                    };
                };
            };
            /** @description REQUEST_NOT_FOUND: Request not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "REQUEST_NOT_FOUND";
                    };
                };
            };
            /** @description RATE_LIMITED: Rate limit exceeded; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "RATE_LIMITED" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    submitFeedback: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    request_id: string;
                    /**
                     * @description -1 bad, 0 neutral, 1 good
                     * @enum {integer}
                     */
                    rating: -1 | 0 | 1;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FeedbackResult"];
                };
            };
            /** @description INVALID_PARAMETERS: Invalid or missing parameters; INVALID_REQUEST_ID: A valid request id (UUID) is required; INVALID_RATING: rating must be -1 (bad), 0 (neutral) or 1 (good) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request" | "missing_request_id" | "invalid_rating";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_PARAMETERS" | "INVALID_REQUEST_ID" | "INVALID_RATING";
                    };
                };
            };
            /** @description MISSING_API_KEY: Missing API key: send it in the x-api-key header; INVALID_API_KEY: Invalid API key; API_KEY_EXPIRED: The API key has expired */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "MISSING_API_KEY" | "INVALID_API_KEY" | "API_KEY_EXPIRED";
                    };
                };
            };
            /** @description KEY_SUSPENDED: The API key is suspended; KEY_REVOKED: The API key has been revoked; ORGANIZATION_SUSPENDED: The API key's organisation is suspended */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "KEY_SUSPENDED" | "KEY_REVOKED" | "ORGANIZATION_SUSPENDED";
                    };
                };
            };
            /** @description REQUEST_NOT_FOUND: Request not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "REQUEST_NOT_FOUND";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description RATE_LIMITED: Rate limit exceeded; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "RATE_LIMITED" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleSessionTokens"] | components["schemas"]["ConsoleMfaChallenge"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description INVALID_CREDENTIALS: Wrong e-mail or password */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_CREDENTIALS";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; PASSWORD_HASHING_BUSY: Too many password checks under way; retry shortly; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "PASSWORD_HASHING_BUSY" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleLoginSecondFactor: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    mfa_token: string;
                    /** @description The current 6-digit code of the authenticator app */
                    code?: string;
                    /** @description One of the recovery codes (each works once) */
                    recovery_code?: string;
                };
            };
        };
        responses: {
            /** @description A new session: its tokens in the body (programs) or in cookies (browsers). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleSessionTokens"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description INVALID_MFA_CODE: Wrong or already used authentication code */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_MFA_CODE";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleRefresh: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh_token?: string;
                };
            };
        };
        responses: {
            /** @description A new session: its tokens in the body (programs) or in cookies (browsers). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleSessionTokens"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; REFRESH_REUSED: This refresh token was already used; the session has been revoked, sign in again */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "REFRESH_REUSED";
                    };
                };
            };
            /** @description CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "CSRF_FAILED";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh_token?: string;
                };
            };
        };
        responses: {
            /** @description Done; no body. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "CSRF_FAILED";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleMe"];
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleChangePassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    current_password: string;
                    new_password: string;
                };
            };
        };
        responses: {
            /** @description A new session: its tokens in the body (programs) or in cookies (browsers). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleSessionTokens"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description INVALID_CREDENTIALS: Wrong e-mail or password; UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "INVALID_CREDENTIALS" | "UNAUTHENTICATED";
                    };
                };
            };
            /** @description CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "CSRF_FAILED";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; PASSWORD_HASHING_BUSY: Too many password checks under way; retry shortly; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "PASSWORD_HASHING_BUSY" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleListSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        sessions: components["schemas"]["ConsoleSession"][];
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleRevokeSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "CSRF_FAILED" | "PASSWORD_CHANGE_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetSecurityLog: {
        parameters: {
            query?: {
                /** @description 1 to 1000 (JSON: default 100; JSON lines: default all) */
                limit?: string;
                /** @description comma-separated actions; `key.*` matches every key action */
                action?: string;
                /** @description the actor's e-mail (any case) or user id; `recog CLI` for the server CLI */
                actor?: string;
                /** @description ISO-8601 date-time, inclusive */
                since?: string;
                /** @description ISO-8601 date-time, exclusive */
                until?: string;
                /** @description only entries older than this id (paging) */
                before?: string;
                /** @description jsonl: every matching entry as JSON lines */
                format?: "json" | "jsonl";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of entries (JSON), or with format=jsonl every matching entry, one JSON object per line (a download). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        entries: components["schemas"]["ConsoleAuditEntry"][];
                    };
                    "application/x-ndjson": components["schemas"]["ConsoleAuditEntry"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetMfa: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleMfaStatus"];
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleStartTotp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Base32 secret for the authenticator app. */
                        secret: string;
                        /** @description The same as an otpauth:// URI (for a QR code). */
                        otpauth_uri: string;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; INVALID_CREDENTIALS: Wrong e-mail or password */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "INVALID_CREDENTIALS";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "CSRF_FAILED";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; PASSWORD_HASHING_BUSY: Too many password checks under way; retry shortly; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "PASSWORD_HASHING_BUSY" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleConfirmTotp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    code: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        totp: "active";
                        /** @description Each works once, instead of a code; in this answer only. */
                        recovery_codes: string[];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; INVALID_MFA_CODE: Wrong or already used authentication code */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "INVALID_MFA_CODE";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "CSRF_FAILED";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleDisableTotp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    password: string;
                    /** @description The current 6-digit code of the authenticator app */
                    code?: string;
                    /** @description One of the recovery codes (each works once) */
                    recovery_code?: string;
                };
            };
        };
        responses: {
            /** @description Done; no body. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; INVALID_CREDENTIALS: Wrong e-mail or password; INVALID_MFA_CODE: Wrong or already used authentication code */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "INVALID_CREDENTIALS" | "INVALID_MFA_CODE";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "CSRF_FAILED";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; PASSWORD_HASHING_BUSY: Too many password checks under way; retry shortly; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "PASSWORD_HASHING_BUSY" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleVerifyMfa: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The current 6-digit code of the authenticator app */
                    code?: string;
                    /** @description One of the recovery codes (each works once) */
                    recovery_code?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        verified: true;
                        /** @description How long this session counts as freshly checked. */
                        valid_for_seconds: number;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; INVALID_MFA_CODE: Wrong or already used authentication code */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "INVALID_MFA_CODE";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "CSRF_FAILED";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetOrgMfa: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        mfa_required: boolean;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleSetOrgMfa: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    required: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        mfa_required: boolean;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "CSRF_FAILED" | "MFA_ENROLLMENT_REQUIRED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetOrg: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The organisation and the caller's role in it. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleOrganization"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleListKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        keys: components["schemas"]["ConsoleKey"][];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleCreateKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    description?: string | null;
                    classes: string[];
                    monthly_quota?: number;
                    expires_at?: string | null;
                    rate_limit_per_minute?: number | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                        /** @description The key itself (x-api-key): in this answer only. */
                        secret: string;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this; MFA_CHECK_REQUIRED: Confirm with a current authentication code first (POST /me/mfa/verify) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE" | "MFA_CHECK_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleUpdateKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    description?: string | null;
                    classes?: string[];
                    monthly_quota?: number;
                    expires_at?: string | null;
                    rate_limit_per_minute?: number | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleSuspendKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleResumeKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleRevokeKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        key: components["schemas"]["ConsoleKey"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetUsage: {
        parameters: {
            query?: {
                /** @description 1 to 366, default 30 */
                days?: string;
                /** @description One key (404 when it is not of this organisation) */
                key_id?: string;
            };
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleUsage"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleListKeyRequests: {
        parameters: {
            query?: {
                /** @description 1 to 200 */
                limit?: string;
            };
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        requests: components["schemas"]["ConsoleRequest"][];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetFeedback: {
        parameters: {
            query?: {
                /** @description 1 to 366, default 30 */
                days?: string;
            };
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsoleFeedback"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleListMembers: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        members: components["schemas"]["ConsoleMember"][];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleInviteMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    role: components["schemas"]["ConsoleRole"];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        invitation: components["schemas"]["ConsoleInvitation"];
                        /** @description email: the link went to the invitee; link: it is in invitation_url, once */
                        delivered: "email" | "link";
                        /** @description The one-time link (delivered: link only). */
                        invitation_url?: string;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleListInvitations: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        invitations: components["schemas"]["ConsoleInvitation"][];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleRevokeInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleRemoveMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleChangeMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    role: components["schemas"]["ConsoleRole"];
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        member: {
                            user: components["schemas"]["ConsoleUser"];
                            role: components["schemas"]["ConsoleRole"];
                        };
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "CSRF_FAILED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleGetAudit: {
        parameters: {
            query?: {
                /** @description 1 to 1000 (JSON: default 100; JSON lines: default all) */
                limit?: string;
                /** @description comma-separated actions; `key.*` matches every key action */
                action?: string;
                /** @description the actor's e-mail (any case) or user id; `recog CLI` for the server CLI */
                actor?: string;
                /** @description ISO-8601 date-time, inclusive */
                since?: string;
                /** @description ISO-8601 date-time, exclusive */
                until?: string;
                /** @description only entries older than this id (paging) */
                before?: string;
                /** @description jsonl: every matching entry as JSON lines */
                format?: "json" | "jsonl";
            };
            header?: never;
            path: {
                org: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of entries (JSON), or with format=jsonl every matching entry, one JSON object per line (a download). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        entries: components["schemas"]["ConsoleAuditEntry"][];
                    };
                    "application/x-ndjson": components["schemas"]["ConsoleAuditEntry"];
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED";
                    };
                };
            };
            /** @description PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_ENROLLMENT_REQUIRED: This organisation requires two-factor authentication: set it up on your Account page first; FORBIDDEN_ROLE: Your role in this organisation does not allow this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "PASSWORD_CHANGE_REQUIRED" | "MFA_ENROLLMENT_REQUIRED" | "FORBIDDEN_ROLE";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleInspectInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description the token of the invitation link (after #/invite/) */
                    token: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        invitation: components["schemas"]["ConsoleInvitationInfo"];
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
    consoleAcceptInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description the token of the invitation link (after #/invite/) */
                    token: string;
                    /** @description no account yet: the password the invitee chooses */
                    new_password?: string;
                    /** @description an existing account not signed in: that account's password */
                    password?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: components["schemas"]["ConsoleUser"];
                        org: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                        };
                        role: components["schemas"]["ConsoleRole"];
                        /** @description The account was created by this call. */
                        new_account: boolean;
                    };
                };
            };
            /** @description VALIDATION_FAILED: The request is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Bad Request";
                        message: string;
                        /** @enum {string} */
                        error_code: "VALIDATION_FAILED";
                    };
                };
            };
            /** @description UNAUTHENTICATED: Sign in first: a valid session is required; INVALID_CREDENTIALS: Wrong e-mail or password */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unauthorized";
                        message: string;
                        /** @enum {string} */
                        error_code: "UNAUTHENTICATED" | "INVALID_CREDENTIALS";
                    };
                };
            };
            /** @description CSRF_FAILED: Missing or wrong CSRF token (x-csrf-token header); PASSWORD_CHANGE_REQUIRED: Your password was set by an operator: choose a new one first (POST /me/password); MFA_CHECK_REQUIRED: Confirm with a current authentication code first (POST /me/mfa/verify) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Forbidden";
                        message: string;
                        /** @enum {string} */
                        error_code: "CSRF_FAILED" | "PASSWORD_CHANGE_REQUIRED" | "MFA_CHECK_REQUIRED";
                    };
                };
            };
            /** @description NOT_FOUND: Not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                        message: string;
                        /** @enum {string} */
                        error_code: "NOT_FOUND";
                    };
                };
            };
            /** @description CONFLICT: The change conflicts with the current state */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "conflict";
                        message: string;
                        /** @enum {string} */
                        error_code: "CONFLICT";
                    };
                };
            };
            /** @description PAYLOAD_TOO_LARGE: The request body is too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Payload Too Large";
                        message: string;
                        /** @enum {string} */
                        error_code: "PAYLOAD_TOO_LARGE";
                    };
                };
            };
            /** @description LOGIN_THROTTLED: Too many failed sign-ins; wait and try again; PASSWORD_HASHING_BUSY: Too many password checks under way; retry shortly; TOO_MANY_IN_FLIGHT: Too many requests in flight from this client address */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Too Many Requests";
                        message: string;
                        /** @enum {string} */
                        error_code: "LOGIN_THROTTLED" | "PASSWORD_HASHING_BUSY" | "TOO_MANY_IN_FLIGHT";
                    };
                };
            };
            /** @description INTERNAL_ERROR: Internal error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Internal Server Error";
                        message: string;
                        /** @enum {string} */
                        error_code: "INTERNAL_ERROR";
                    };
                };
            };
            /** @description SERVICE_UNAVAILABLE: The service is shutting down; retry on another instance; DATABASE_UNAVAILABLE: The database is unavailable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "Service Unavailable";
                        message: string;
                        /** @enum {string} */
                        error_code: "SERVICE_UNAVAILABLE" | "DATABASE_UNAVAILABLE";
                    };
                };
            };
        };
    };
}
