/**
 * The console API's messages, written once (TypeBox): the routes serialise their answers
 * through these schemas (a field not declared here never leaves the service), the handlers
 * build them as their `Static<>` types, and /openapi.json publishes them under
 * components/schemas (Console*), from which the web console's and the SDK's types come.
 * Also the error codes every console route can answer with, and roles with their ranks.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../api/errors.js';
import { Detection, RequestStatus, responses } from '../api/schemas.js';
import { ROLES, type Role } from '../store/users.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Instant = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
/** A reference to a component (a schema with $id), typed as the component. */
export function refTo<T extends TSchema>(schema: T) {
  if (schema.$id === undefined) throw new Error('only a component (a schema with $id) is referred to');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** Lowest first: each role may do what every role before it may. */
const BY_RANK: Role[] = [...ROLES].reverse();
/** A role's rank: the greater, the more it may do. */
export const RANK = Object.fromEntries(BY_RANK.map((r, i) => [r, i])) as Record<Role, number>;
export const atLeast = (role: Role, least: Role): boolean => RANK[role] >= RANK[least];

/** What each role may do, for the docs and the tests: the least role per action. */
export const LEAST_ROLE = {
  read: 'viewer',
  manageKeys: 'member',
  manageMembers: 'admin',
  readAudit: 'admin',
} as const satisfies Record<string, Role>;

export const ConsoleRole = Type.Unsafe<Role>({
  $id: 'ConsoleRole',
  title: 'ConsoleRole',
  type: 'string',
  enum: BY_RANK,
  description: `A member's role, listed lowest first (its rank is its place in this list): each may do what the ones before it may. Least role: read ${LEAST_ROLE.read}, manage keys ${LEAST_ROLE.manageKeys}, manage members and read the audit log ${LEAST_ROLE.manageMembers}; only an owner changes or makes an owner.`,
});

export const ConsoleUser = Type.Object({ id: Type.String({ format: 'uuid' }), email: Type.String() }, { $id: 'ConsoleUser', title: 'ConsoleUser' });

export const ConsoleSessionTokens = Type.Object(
  {
    access_token: Type.Optional(Type.String({ description: 'Absent for a browser (x-console-session: cookie): it is in an HttpOnly cookie.' })),
    access_expires_in: Type.Integer({ description: 'Seconds the access token lives.' }),
    refresh_token: Type.Optional(Type.String({ description: 'Absent for a browser: it is in an HttpOnly cookie.' })),
    refresh_expires_in: Type.Integer({ description: 'Seconds the refresh token lives.' }),
    token_type: Type.Literal('Bearer'),
    user: refTo(ConsoleUser),
  },
  { $id: 'ConsoleSessionTokens', title: 'ConsoleSessionTokens', description: 'A new session: its tokens in the body (programs) or in cookies (browsers).' },
);

export const ConsoleMfaChallenge = Type.Object(
  {
    mfa_required: Type.Literal(true),
    mfa_token: Type.String({ description: 'Single use; send it with a code to POST /auth/mfa.' }),
    mfa_expires_in: Type.Integer({ description: 'Seconds the challenge lives.' }),
    methods: Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('recovery_code')])),
  },
  { $id: 'ConsoleMfaChallenge', title: 'ConsoleMfaChallenge', description: 'The password was right; the account has a second factor, so no session yet.' },
);

export const ConsoleMembership = Type.Object(
  { org: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), role: refTo(ConsoleRole) },
  { $id: 'ConsoleMembership', title: 'ConsoleMembership' },
);

export const ConsoleMe = Type.Object(
  {
    user: refTo(ConsoleUser),
    memberships: Type.Array(refTo(ConsoleMembership)),
    password_must_change: Type.Boolean({ description: 'The password was set by an operator: every other route answers 403 PASSWORD_CHANGE_REQUIRED until it is changed.' }),
  },
  { $id: 'ConsoleMe', title: 'ConsoleMe' },
);

export const ConsoleSession = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    created_at: Instant(),
    last_used_at: Instant(),
    expires_at: Instant('When it ends at the latest (idle sessions end earlier).'),
    user_agent: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    current: Type.Boolean({ description: 'The session of this request.' }),
  },
  { $id: 'ConsoleSession', title: 'ConsoleSession' },
);

export const ConsoleOrganization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
    balance: Nullable(Type.Integer({ description: 'API calls left; null: unlimited.' })),
    created_at: Instant(),
    role: refTo(ConsoleRole),
  },
  { $id: 'ConsoleOrganization', title: 'ConsoleOrganization', description: 'The organisation and the caller\'s role in it.' },
);

export const ConsoleKey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    prefix: Type.String({ description: 'The first characters of the secret, to recognise it.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended'), Type.Literal('revoked')]),
    classes: Type.Array(Type.String(), { description: 'Labels of the model catalog, or ["*"] for all.' }),
    monthly_quota: Type.Integer(),
    used_this_month: Type.Integer({ description: 'Calls counted this UTC month.' }),
    rate_limit_per_minute: Type.Integer({ description: "The key's own limit, or the service default." }),
    rate_limit_is_default: Type.Boolean({ description: 'True when the key has no limit of its own.' }),
    last_used_at: Nullable(Instant()),
    created_at: Instant(),
    expires_at: Nullable(Instant()),
  },
  { $id: 'ConsoleKey', title: 'ConsoleKey' },
);

const Ratings = { bad: Type.Integer(), neutral: Type.Integer(), good: Type.Integer() };
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'UTC day' });

export const ConsoleUsage = Type.Object(
  {
    days: Type.Array(Type.Object({ date: Day, done: Type.Integer(), error: Type.Integer(), refused: Type.Integer({ description: 'Calls the limits refused (rate, quota, balance).' }) }), {
      description: 'One entry per day, oldest first, today last.',
    }),
    quota: Type.Object({ month: Type.String({ description: 'YYYY-MM, UTC' }), limit: Type.Integer(), used: Type.Integer() }, { description: "This month: of the key, or of the organisation's live keys." }),
    balance: Nullable(Type.Integer({ description: 'null: unlimited' })),
  },
  { $id: 'ConsoleUsage', title: 'ConsoleUsage' },
);

export const ConsoleFeedback = Type.Object(
  {
    by_label: Type.Array(Type.Object({ label: Type.String(), ...Ratings })),
    by_day: Type.Array(Type.Object({ date: Day, ...Ratings }), { description: 'One entry per day, oldest first.' }),
  },
  { $id: 'ConsoleFeedback', title: 'ConsoleFeedback' },
);

export const ConsoleRequest = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    external_id: Nullable(Type.String()),
    kind: Type.String({ description: 'sync or batch' }),
    status: RequestStatus,
    created_at: Instant(),
    processing_time_ms: Nullable(Type.Integer()),
    image_url: Nullable(Type.String({ description: 'Signed, expiring link to the stored image; null when none is stored.' })),
    results: Type.Array(refTo(Detection)),
    error: Nullable(Type.String()),
    response_code: Nullable(Type.Integer()),
    feedback: Nullable(Type.Integer({ minimum: -1, maximum: 1, description: '-1 bad, 0 neutral, 1 good' })),
  },
  { $id: 'ConsoleRequest', title: 'ConsoleRequest' },
);

export const ConsoleMember = Type.Object({ user: refTo(ConsoleUser), role: refTo(ConsoleRole), created_at: Instant() }, { $id: 'ConsoleMember', title: 'ConsoleMember' });

export const ConsoleInvitation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: refTo(ConsoleRole),
    invited_by: Type.Object({ id: Nullable(Type.String({ description: 'null: an operator with the recog CLI' })), email: Type.String() }),
    created_at: Instant(),
    expires_at: Instant(),
  },
  { $id: 'ConsoleInvitation', title: 'ConsoleInvitation', description: 'A pending invitation, as the organisation sees it.' },
);

export const ConsoleInvitationInfo = Type.Object(
  {
    org: Type.Object({ name: Type.String() }),
    email: Type.String(),
    role: refTo(ConsoleRole),
    invited_by: Type.String({ description: "The inviter's e-mail." }),
    expires_at: Instant(),
    new_account: Type.Boolean({ description: 'No account has the e-mail yet: accepting sets its password.' }),
  },
  { $id: 'ConsoleInvitationInfo', title: 'ConsoleInvitationInfo', description: 'What an invitation link is for, as its holder sees it.' },
);

export const ConsoleAuditEntry = Type.Object(
  {
    id: Type.Integer({ description: 'Increasing; `before` pages by it.' }),
    created_at: Instant(),
    org_id: Nullable(Type.String({ format: 'uuid' })),
    user_id: Nullable(Type.String({ format: 'uuid', description: "The account whose security log shows it." })),
    actor: Type.Object({ id: Nullable(Type.String({ description: 'null: the recog CLI, or someone not signed in' })), email: Type.String() }),
    action: Type.String({ description: 'Such as key.create or session.login.' }),
    target: Type.Object({ type: Type.String(), id: Type.String(), name: Nullable(Type.String()) }),
    details: Type.Object({}, { additionalProperties: true, description: 'Depends on the action.' }),
    ip: Nullable(Type.String()),
  },
  { $id: 'ConsoleAuditEntry', title: 'ConsoleAuditEntry' },
);

export const ConsoleMfaStatus = Type.Object(
  {
    totp: Type.Union([Type.Literal('none'), Type.Literal('pending'), Type.Literal('active')], { description: 'pending: enrolled, not yet confirmed with a code' }),
    recovery_codes_left: Type.Integer(),
    session_verified_recently: Type.Boolean({ description: 'This session passed a second-factor check recently (creating keys needs it).' }),
  },
  { $id: 'ConsoleMfaStatus', title: 'ConsoleMfaStatus' },
);

/** Registered on the app (components/schemas), so answers refer to them by $id. */
export const consoleSchemas = [
  ConsoleRole, ConsoleUser, ConsoleSessionTokens, ConsoleMfaChallenge, ConsoleMembership, ConsoleMe, ConsoleSession, ConsoleOrganization, ConsoleKey,
  ConsoleUsage, ConsoleFeedback, ConsoleRequest, ConsoleMember, ConsoleInvitation, ConsoleInvitationInfo, ConsoleAuditEntry, ConsoleMfaStatus,
];

export type ConsoleUser = Static<typeof ConsoleUser>;
export type ConsoleSessionTokens = Static<typeof ConsoleSessionTokens>;
export type ConsoleMfaChallenge = Static<typeof ConsoleMfaChallenge>;
export type ConsoleMe = Static<typeof ConsoleMe>;
export type ConsoleSession = Static<typeof ConsoleSession>;
export type ConsoleOrganization = Static<typeof ConsoleOrganization>;
export type ConsoleKey = Static<typeof ConsoleKey>;
export type ConsoleUsage = Static<typeof ConsoleUsage>;
export type ConsoleFeedback = Static<typeof ConsoleFeedback>;
export type ConsoleRequest = Static<typeof ConsoleRequest>;
export type ConsoleMember = Static<typeof ConsoleMember>;
export type ConsoleInvitation = Static<typeof ConsoleInvitation>;
export type ConsoleInvitationInfo = Static<typeof ConsoleInvitationInfo>;
export type ConsoleAuditEntry = Static<typeof ConsoleAuditEntry>;
export type ConsoleMfaStatus = Static<typeof ConsoleMfaStatus>;

/** An answer's body: an object whose fields are these. */
export const answer = <P extends Record<string, TSchema>>(properties: P, description?: string) => Type.Object(properties, description ? { description } : {});
/** 204: nothing in the body. */
export const NoContent = Type.Null({ description: 'Done; no body.' });
export const AuditPage = answer({ entries: Type.Array(refTo(ConsoleAuditEntry)) }, 'A page, newest first.');
export type AuditPage = Static<typeof AuditPage>;

/**
 * The error codes, in groups a route combines. ALWAYS: any console request can be refused
 * before its route (draining, too many in flight from one address) or fail (database, bug).
 */
const ALWAYS: ErrorCode[] = ['TOO_MANY_IN_FLIGHT', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE'];
export const CODES = {
  /** Route parameters or a query string that the schema or the route refuses. */
  input: ['VALIDATION_FAILED'],
  /** A body: refused by the schema, unreadable, of another type, or too large (every unsafe method reads one). */
  body: ['VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'],
  /** An unsafe method with the browser's cookies needs the CSRF header. */
  csrf: ['CSRF_FAILED'],
  /** A signed-in route (requireSession). */
  session: ['UNAUTHENTICATED', 'PASSWORD_CHANGE_REQUIRED'],
  /** A password checked under the sign-in throttle. */
  password: ['INVALID_CREDENTIALS', 'LOGIN_THROTTLED', 'PASSWORD_HASHING_BUSY'],
  /** A second-factor code checked under the throttle. */
  secondFactor: ['INVALID_MFA_CODE', 'LOGIN_THROTTLED'],
  /** Path parameters over their schema's bounds. */
  path: ['VALIDATION_FAILED'],
  /** Under /orgs/:org: outsiders get 404, members without a second factor where one is required 403. */
  org: ['VALIDATION_FAILED', 'NOT_FOUND', 'MFA_ENROLLMENT_REQUIRED'],
} satisfies Record<string, ErrorCode[]>;

/** A console route's response schemas: its success answers and an error body per status for `codes` (plus ALWAYS). */
export function consoleResponses(success: Record<number, TSchema>, ...codes: ErrorCode[][]): Record<number, TSchema> {
  return responses(success, [...new Set([...codes.flat(), ...ALWAYS])]);
}

/** A 200 that is one page of JSON, or (format=jsonl) every matching entry as JSON lines. */
export const AuditAnswer = Type.Unsafe<AuditPage>({
  description: 'A page of entries (JSON), or with format=jsonl every matching entry, one JSON object per line (a download).',
  content: {
    'application/json': { schema: AuditPage },
    'application/x-ndjson': { schema: refTo(ConsoleAuditEntry) },
  },
});

export const TotpEnrollment = answer({
  secret: Type.String({ description: 'Base32 secret for the authenticator app.' }),
  otpauth_uri: Type.String({ description: 'The same as an otpauth:// URI (for a QR code).' }),
});
export const TotpConfirmed = answer({ totp: Type.Literal('active'), recovery_codes: Type.Array(Type.String(), { description: 'Each works once, instead of a code; in this answer only.' }) });
export const MfaVerified = answer({ verified: Type.Literal(true), valid_for_seconds: Type.Integer({ description: 'How long this session counts as freshly checked.' }) });
export const OrgMfaRequirement = answer({ mfa_required: Type.Boolean() });
