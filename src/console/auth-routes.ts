/** Sign-in, refresh, sign-out, the signed-in user and their sessions. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../api/errors.js';
import { accountOfSession, audited, writeAudit } from '../store/audit.js';
import {
  changePassword, listSessions, ownsSession, revokeSession, rotateRefresh, sessionForAccessToken, sessionForRefreshToken, startSession,
  REFRESH_GRACE_SECONDS, type RefreshRefusal, type SessionTtls, type TokenPair,
} from '../store/sessions.js';
import { challengeUser, createChallenge, hasTotp, markSessionVerified, MFA_CHALLENGE_SECONDS, spendChallenge } from '../store/mfa.js';
import { findUserByEmail, getUser, membershipsOf, type User } from '../store/users.js';
import { AuditQuery, auditFilterOf, sendAudit } from './audit-view.js';
import type { ConsoleContext } from './context.js';
import { SECURITY, TAG } from './context.js';
import { checkSecondFactor, SecondFactorFields } from './mfa.js';
import { MAX_PASSWORD_LENGTH, passwordProblem } from './passwords.js';
import {
  AuditAnswer, CODES, ConsoleMe, ConsoleMfaChallenge, ConsoleSession, ConsoleSessionTokens, NoContent, answer, consoleResponses, refTo,
  type ConsoleUser,
} from './schemas.js';
import { bearerToken, checkCsrf, cookiesOf, requireSession, userOf } from './session-auth.js';
import { auditFailedSignIn, securityEntry, throttleAudited } from './security-events.js';
import { accountSubject, addressSubject } from './throttle.js';

/** A browser asks for cookies instead of tokens in the body. */
export const COOKIE_MODE_HEADER = 'x-console-session';

const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
const MfaBody = Type.Object({ mfa_token: Type.String({ minLength: 1, maxLength: 128 }), ...SecondFactorFields }, { additionalProperties: false });
const RefreshBody = Type.Object({ refresh_token: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });
const PasswordBody = Type.Object(
  { current_password: Type.String({ maxLength: MAX_PASSWORD_LENGTH }), new_password: Type.String({ maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
const SessionParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Why a refresh was refused, for its 401 UNAUTHENTICATED: a session that ended says how. */
function refusalMessage(reason: RefreshRefusal, ttl: SessionTtls): string {
  if (reason === 'idle') return `The session ended after ${duration(ttl.idleSeconds)} without activity; sign in again`;
  if (reason === 'expired') return `The session ended: sessions last at most ${duration(ttl.refreshSeconds)} from sign-in; sign in again`;
  return 'The refresh token is invalid or its session has ended; sign in again';
}

function duration(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? '1 hour' : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? '1 minute' : `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

export function cookieMode(request: FastifyRequest): boolean {
  return request.headers[COOKIE_MODE_HEADER] === 'cookie';
}

export function authRoutes(ctx: ConsoleContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const { db } = ctx;
    const session = requireSession(db);
    /** GET /me and POST /me/password stay open to a session whose password must change (an operator set it). */
    const passwordSession = requireSession(db, { whilePasswordMustChange: true });

    /** `freshCsrf`: a new CSRF secret at sign-in (never one planted before it); kept across refreshes. */
    function setCookies(request: FastifyRequest, reply: FastifyReply, pair: TokenPair, freshCsrf: boolean): void {
      // `__Host-` names (Secure, Path=/) over https, plain ones over http: see session-auth.ts.
      const { secure, access, refresh, csrf: csrfCookie } = cookiesOf(request);
      const base = { secure, sameSite: 'strict' as const };
      reply.setCookie(access.name, pair.accessToken, { ...base, httpOnly: true, path: access.path, maxAge: pair.accessExpiresIn });
      reply.setCookie(refresh.name, pair.refreshToken, { ...base, httpOnly: true, path: refresh.path, maxAge: pair.refreshExpiresIn });
      // Readable by the page's script, which echoes it in x-csrf-token (double submit).
      const csrf = (freshCsrf ? undefined : request.cookies[csrfCookie.name]) ?? randomBytes(24).toString('base64url');
      reply.setCookie(csrfCookie.name, csrf, { ...base, httpOnly: false, path: csrfCookie.path, maxAge: pair.refreshExpiresIn });
    }
    function clearCookies(request: FastifyRequest, reply: FastifyReply): void {
      // A browser drops a __Host- cookie only on a Set-Cookie that is itself Secure with Path=/.
      const { secure, access, refresh, csrf } = cookiesOf(request);
      for (const c of [access, refresh, csrf]) reply.clearCookie(c.name, { path: c.path, secure, sameSite: 'strict' });
    }
    function tokenBody(pair: TokenPair, user: ConsoleUser, withTokens: boolean): ConsoleSessionTokens {
      return {
        ...(withTokens ? { access_token: pair.accessToken } : {}),
        access_expires_in: pair.accessExpiresIn,
        ...(withTokens ? { refresh_token: pair.refreshToken } : {}),
        refresh_expires_in: pair.refreshExpiresIn,
        token_type: 'Bearer' as const,
        user: { id: user.id, email: user.email },
      };
    }

    /**
     * The answer that hands over a new session: a browser (cookies) gets its tokens in
     * cookies and none in the body; a program gets them in the body. Never cached.
     */
    function sessionAnswer(request: FastifyRequest, reply: FastifyReply, pair: TokenPair, user: ConsoleUser, inCookies: boolean, freshCsrf: boolean): ConsoleSessionTokens {
      void reply.header('Cache-Control', 'no-store');
      if (inCookies) setCookies(request, reply, pair, freshCsrf);
      return tokenBody(pair, user, !inCookies);
    }

    /** The audit entry of a sign-in that started the session `sessionId`. */
    function loginEntry(request: FastifyRequest, user: { id: string; email: string }, sessionId: string, extra: Record<string, unknown> = {}) {
      const who = { id: user.id, email: user.email };
      return securityEntry(request, user.id, who, 'session.login', { type: 'session', id: sessionId }, { user_agent: request.headers['user-agent']?.slice(0, 300) ?? null, ...extra });
    }

    const clientOf = (request: FastifyRequest) => ({ userAgent: request.headers['user-agent'], ip: request.ip });

    app.post(
      '/auth/login',
      {
        schema: {
          tags: [TAG],
          operationId: 'consoleLogin',
          summary: 'Sign in with e-mail and password',
          description: `Returns an access token and a refresh token, or for an account with two-factor authentication \`{"mfa_required":true,"mfa_token","mfa_expires_in","methods"}\` (no session yet: POST /auth/mfa). With header \`${COOKIE_MODE_HEADER}: cookie\` (the web app) they are set as HttpOnly cookies instead.`,
          body: LoginBody,
          response: consoleResponses({ 200: Type.Union([refTo(ConsoleSessionTokens), refTo(ConsoleMfaChallenge)]) }, CODES.body, CODES.password),
        },
      },
      async (request, reply): Promise<ConsoleSessionTokens | ConsoleMfaChallenge> => {
        const { email, password } = request.body as Static<typeof LoginBody>;
        // Who the attempt was for, for the audit entries (null: no account with that e-mail).
        let account: User | null = null;
        // The attempt is counted (or refused, 429) before the password is looked at, alike for unknown e-mails.
        const user = await throttleAudited(db, request, email, 'login', () =>
          ctx.throttle.check({ account: accountSubject(email), address: addressSubject(request.ip) }, async () => {
            const found = (account = await findUserByEmail(db, email));
            if (!found) return ctx.passwords.burn(password).then(() => null);
            return (await ctx.passwords.verify(password, found.password_hash)) ? found : null;
          }),
        );
        const failed = (reason: string) => auditFailedSignIn(db, request, email, account, 'login', reason);
        if (!user) {
          await failed('invalid_credentials');
          throw new ApiError('INVALID_CREDENTIALS');
        }
        // With a second factor, a right password gives a short-lived challenge, not a session (POST /auth/mfa).
        if (await hasTotp(db, user.id)) {
          void reply.header('Cache-Control', 'no-store');
          return { mfa_required: true, mfa_token: await createChallenge(db, user.id, request.headers['user-agent']), mfa_expires_in: MFA_CHALLENGE_SECONDS, methods: ['totp', 'recovery_code'] as const };
        }
        // null: the password changed while it was being checked; the one presented is no longer it.
        // The session and its entry commit together (startSession's own transaction is a savepoint in this one).
        const pair = await audited(
          db,
          (trx) => startSession(trx, user.id, ctx.ttl, clientOf(request), user.password_hash),
          (p) => (p ? loginEntry(request, user, p.sessionId) : null),
        );
        if (!pair) {
          await failed('password_changed');
          throw new ApiError('INVALID_CREDENTIALS');
        }
        return sessionAnswer(request, reply, pair, user, cookieMode(request), true);
      },
    );

    app.post(
      '/auth/mfa',
      {
        schema: {
          tags: [TAG],
          operationId: 'consoleLoginSecondFactor',
          summary: 'Second step of a sign-in with two-factor authentication: the challenge and a code',
          description: `After a right password, an account with TOTP gets \`{"mfa_required":true,"mfa_token"}\` from /auth/login instead of tokens. This call, with that token (single use, ${MFA_CHALLENGE_SECONDS / 60} minutes) and a current code or a recovery code, answers like a sign-in. Wrong codes are throttled per account and per address (LOGIN_THROTTLED).`,
          body: MfaBody,
          response: consoleResponses({ 200: refTo(ConsoleSessionTokens) }, CODES.body, CODES.secondFactor),
        },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof MfaBody>;
        const userId = await challengeUser(db, body.mfa_token);
        if (userId === null) throw new ApiError('INVALID_MFA_CODE', 'The sign-in challenge is unknown, used or expired; sign in again');
        const user = await getUser(db, userId);
        const method = await checkSecondFactor(ctx, request, user, body, 'auth/mfa');
        // The challenge is spent, the session started and marked checked, with its entry: one transaction.
        const pair = await audited(
          db,
          async (trx) => {
            if (!(await spendChallenge(trx, body.mfa_token))) return null;
            const p = await startSession(trx, user.id, ctx.ttl, clientOf(request), user.password_hash);
            if (p) await markSessionVerified(trx, p.sessionId);
            return p;
          },
          (p) => (p ? loginEntry(request, user, p.sessionId, { mfa: method }) : null),
        );
        if (!pair) throw new ApiError('INVALID_MFA_CODE', 'The sign-in challenge is unknown, used or expired; sign in again');
        return sessionAnswer(request, reply, pair, user, cookieMode(request), true);
      },
    );

    app.post(
      '/auth/refresh',
      {
        schema: {
          tags: [TAG],
          operationId: 'consoleRefresh',
          summary: 'Exchange a refresh token for a new pair (the old refresh token is spent)',
          description:
            `Presenting a spent refresh token answers REFRESH_REUSED and revokes the whole session, except within ${REFRESH_GRACE_SECONDS} s of its exchange (two tabs refreshing at once), when it gets the same new pair again. A session ends 12 h after sign-in and after 30 min without activity by default (UNAUTHENTICATED, saying which). Browsers send no body: the refresh cookie and x-csrf-token are used.`,
          body: RefreshBody,
          response: consoleResponses({ 200: refTo(ConsoleSessionTokens) }, CODES.body, CODES.csrf, ['UNAUTHENTICATED', 'REFRESH_REUSED']),
        },
      },
      async (request, reply) => {
        const bodyToken = (request.body as Static<typeof RefreshBody> | undefined)?.refresh_token;
        const viaCookie = bodyToken === undefined;
        const presented = bodyToken ?? request.cookies[cookiesOf(request).refresh.name];
        if (!presented) throw new ApiError('UNAUTHENTICATED', 'A refresh token is required');
        if (viaCookie) checkCsrf(request);
        const outcome = await rotateRefresh(db, presented, ctx.ttl);
        if (!outcome.ok) {
          if (viaCookie) clearCookies(request, reply);
          if (outcome.reason === 'reused') {
            // The family is revoked by now; the entry names its account (a plain insert: the revocation is rotateRefresh's own).
            const who = outcome.sessionId === undefined ? null : await accountOfSession(db, outcome.sessionId);
            if (who) await writeAudit(db, securityEntry(request, who.id, who, 'session.refresh_reused', { type: 'session', id: outcome.sessionId as string }, { session_revoked: true }));
            throw new ApiError('REFRESH_REUSED');
          }
          throw new ApiError('UNAUTHENTICATED', refusalMessage(outcome.reason, ctx.ttl));
        }
        const user = await getUser(db, outcome.userId);
        void reply.header('Cache-Control', 'no-store');
        if (viaCookie) {
          setCookies(request, reply, outcome.pair, false);
          return tokenBody(outcome.pair, user, false);
        }
        return tokenBody(outcome.pair, user, true);
      },
    );

    app.post(
      '/auth/logout',
      {
        // The body is optional (a bare POST with a bearer token is the usual call): none is an empty one.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags: [TAG],
          operationId: 'consoleLogout',
          summary: 'Sign out: revokes the current session (every token of it)',
          description: 'Authenticated by the bearer access token, or by {"refresh_token"} in the body, or by the browser cookies (with x-csrf-token).',
          security: SECURITY,
          body: RefreshBody,
          response: consoleResponses({ 204: NoContent }, CODES.body, CODES.csrf, ['UNAUTHENTICATED']),
        },
      },
      async (request, reply) => {
        const bearer = bearerToken(request);
        const bodyToken = (request.body as Static<typeof RefreshBody>).refresh_token;
        let sessionId: string | null = null;
        if (bearer !== undefined) sessionId = (await sessionForAccessToken(db, bearer))?.sessionId ?? null;
        if (sessionId === null && bodyToken !== undefined) sessionId = await sessionForRefreshToken(db, bodyToken);
        if (sessionId === null && bearer === undefined && bodyToken === undefined) {
          const access = request.cookies[cookiesOf(request).access.name];
          const refresh = request.cookies[cookiesOf(request).refresh.name];
          if (access || refresh) {
            checkCsrf(request);
            clearCookies(request, reply);
            if (access) sessionId = (await sessionForAccessToken(db, access))?.sessionId ?? null;
            if (sessionId === null && refresh) sessionId = await sessionForRefreshToken(db, refresh);
          }
        }
        if (sessionId === null) throw new ApiError('UNAUTHENTICATED', 'No live session to sign out of');
        const id = sessionId;
        await audited(
          db,
          async (trx) => ((await revokeSession(trx, id, 'logout')) ? accountOfSession(trx, id) : null),
          (who) => (who ? securityEntry(request, who.id, who, 'session.logout', { type: 'session', id }) : null),
        );
        return reply.code(204).send();
      },
    );

    app.get(
      '/me',
      {
        onRequest: passwordSession,
        schema: {
          tags: [TAG],
          operationId: 'consoleGetMe',
          summary: 'The signed-in user and their organisations',
          description:
            '`password_must_change: true`: the password was set by an operator; every other route answers 403 PASSWORD_CHANGE_REQUIRED until it is changed (POST /me/password).',
          security: SECURITY,
          response: consoleResponses({ 200: refTo(ConsoleMe) }, ['UNAUTHENTICATED']),
        },
      },
      async (request): Promise<ConsoleMe> => {
        const u = userOf(request);
        const memberships = await membershipsOf(db, u.id);
        return { user: { id: u.id, email: u.email }, memberships, password_must_change: u.passwordMustChange };
      },
    );

    app.post(
      '/me/password',
      {
        onRequest: passwordSession,
        schema: {
          tags: [TAG],
          operationId: 'consoleChangePassword',
          summary: 'Change your password: every session ends, this client gets a new one',
          description:
            'In one transaction with the change, every session of the user is revoked (this one included), a temporary password (`password_must_change`) stops being one, and a new session is started for the caller, answered like a sign-in (cookies for a browser session). Sessions signed in before the change are refused from then on.',
          body: PasswordBody,
          security: SECURITY,
          response: consoleResponses({ 200: refTo(ConsoleSessionTokens) }, CODES.body, CODES.csrf, CODES.password, ['UNAUTHENTICATED']),
        },
      },
      async (request, reply) => {
        const u = userOf(request);
        const body = request.body as Static<typeof PasswordBody>;
        const user = await getUser(db, u.id);
        // Throttled like a sign-in, in the same buckets: a stolen session is no second way to guess the password.
        const me = { id: user.id, email: user.email };
        const ok = await throttleAudited(db, request, user.email, 'me/password', () =>
          ctx.throttle.check({ account: accountSubject(user.email), address: addressSubject(request.ip) }, async () =>
            (await ctx.passwords.verify(body.current_password, user.password_hash)) ? user : null,
          ),
        );
        if (!ok) {
          await writeAudit(db, securityEntry(request, user.id, me, 'user.password_change_failed', { type: 'user', id: user.id, name: user.email }, { reason: 'wrong_current_password' }));
          throw new ApiError('INVALID_CREDENTIALS', 'The current password is wrong');
        }
        const problem = passwordProblem(body.new_password, user.email);
        if (problem) throw new ApiError('VALIDATION_FAILED', problem);
        const newHash = await ctx.passwords.hash(body.new_password);
        // The change, every session ended, the caller's new session and the entry: one transaction.
        const pair = await audited(
          db,
          (trx) => changePassword(trx, u.id, newHash, 'password_changed', { ttl: ctx.ttl, client: clientOf(request) }),
          (p) => securityEntry(request, user.id, me, 'user.password_change', { type: 'user', id: user.id, name: user.email }, { sessions_ended: true, new_session: p?.sessionId ?? null }),
        );
        if (!pair) throw new Error('changePassword started no session');
        return sessionAnswer(request, reply, pair, user, u.via === 'cookie', false);
      },
    );

    const SessionList = answer({ sessions: Type.Array(refTo(ConsoleSession)) }, 'Newest first.');
    app.get(
      '/sessions',
      {
        onRequest: session,
        schema: { operationId: 'consoleListSessions', tags: [TAG], summary: 'Your live sessions', security: SECURITY, response: consoleResponses({ 200: SessionList }, CODES.session) },
      },
      async (request): Promise<Static<typeof SessionList>> => {
        const u = userOf(request);
        const rows = await listSessions(db, u.id, ctx.ttl);
        return {
          sessions: rows.map((s) => ({
            id: s.id,
            created_at: s.created_at.toISOString(),
            last_used_at: s.last_used_at.toISOString(),
            expires_at: s.expires_at.toISOString(),
            user_agent: s.user_agent,
            ip: s.ip,
            current: s.id === u.sessionId,
          })),
        };
      },
    );

    app.delete(
      '/sessions/:id',
      {
        onRequest: session,
        schema: {
          operationId: 'consoleRevokeSession',
          tags: [TAG],
          summary: 'Revoke one of your sessions',
          params: SessionParams,
          security: SECURITY,
          response: consoleResponses({ 204: NoContent }, CODES.body, CODES.path, CODES.csrf, CODES.session, ['NOT_FOUND']),
        },
      },
      async (request, reply) => {
        const u = userOf(request);
        const { id } = request.params as { id: string };
        if (!/^[0-9a-f-]{36}$/i.test(id) || !(await ownsSession(db, u.id, id))) throw new ApiError('NOT_FOUND', 'No such session');
        await audited(
          db,
          (trx) => revokeSession(trx, id, 'revoked_by_user'),
          (revoked) => (revoked ? securityEntry(request, u.id, { id: u.id, email: u.email }, 'session.revoke', { type: 'session', id }, { current: id === u.sessionId }) : null),
        );
        return reply.code(204).send();
      },
    );

    app.get(
      '/me/audit',
      {
        onRequest: session,
        schema: {
          tags: [TAG],
          operationId: 'consoleGetSecurityLog',
          summary: "Your account's security log, newest first, filtered; or all of it as JSON lines",
          description: 'Sign-ins, failed and throttled sign-ins, sign-outs, password changes, session revocations and refresh-token reuse of the signed-in account. The filters and `format=jsonl` of the organisation audit log.',
          querystring: AuditQuery,
          security: SECURITY,
          response: consoleResponses({ 200: AuditAnswer }, CODES.input, CODES.session),
        },
      },
      async (request, reply) => {
        const u = userOf(request);
        return sendAudit(db, reply, { userId: u.id }, auditFilterOf(request.query as Record<string, string | undefined>), 'security-log');
      },
    );
  };
}
