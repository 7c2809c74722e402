/**
 * The second factor (TOTP, RFC 6238, with recovery codes): enrollment and removal on the
 * account, the check a sign-in challenge, a fresh re-check and its removal share, the
 * organisation's requirement and its gate on organisation routes, and the fresh check that
 * key creation needs. The code arithmetic is in totp.ts, storage in src/store/mfa.ts.
 *
 * Wrong codes are throttled by the LoginThrottle under their own account subject
 * (`mfaSubject`), not the password's: a right password clears the password's failures, and
 * must not give someone who knows it a new series of code guesses.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';
import { audited, writeAudit } from '../store/audit.js';
import { NotFoundError } from '../store/db.js';
import {
  acceptStep, confirmEnrollment, getTotp, hasTotp, markSessionVerified, mfaBlocksMember, orgRequiresMfa, recoveryCodesLeft, removeTotp,
  sessionVerifiedWithin, setOrgMfaRequired, spendRecoveryCode, startEnrollment,
} from '../store/mfa.js';
import { resolveOrg } from '../store/orgs.js';
import { getUser, roleIn, type Role } from '../store/users.js';
import { SECURITY, TAG, type ConsoleContext } from './context.js';
import { MAX_PASSWORD_LENGTH } from './passwords.js';
import { CODES, ConsoleMfaStatus, MfaVerified, NoContent, OrgMfaRequirement, TotpConfirmed, TotpEnrollment, consoleResponses, refTo } from './schemas.js';
import { securityEntry, throttleAudited } from './security-events.js';
import { requireSession, userOf } from './session-auth.js';
import { accountSubject, addressSubject } from './throttle.js';
import { matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, otpauthUri } from './totp.js';

/** Key creation needs a second-factor check of this session within this many seconds (users with TOTP). */
export const FRESH_MFA_SECONDS = 10 * 60;
/** The issuer authenticator apps show next to the account. */
export const TOTP_ISSUER = 'Recognition console';

/** The throttle's account subject for second-factor codes (apart from the password's). */
export function mfaSubject(email: string): string {
  return `mfa-${accountSubject(email)}`;
}

/** A code from the authenticator app, or one of the recovery codes: exactly one of them. */
export const SecondFactorFields = {
  code: Type.Optional(Type.String({ minLength: 6, maxLength: 10, description: 'The current 6-digit code of the authenticator app' })),
  recovery_code: Type.Optional(Type.String({ minLength: 16, maxLength: 40, description: 'One of the recovery codes (each works once)' })),
};
export interface SecondFactorInput {
  code?: string;
  recovery_code?: string;
}

export type SecondFactorMethod = 'totp' | 'recovery_code';

/**
 * Checks a second factor of `user` under the throttle: a TOTP code (within ±1 step, never one
 * already accepted) or an unused recovery code (spent, audited in its transaction). Throws
 * INVALID_MFA_CODE (audited `session.mfa_failed`) or LOGIN_THROTTLED.
 */
export async function checkSecondFactor(ctx: ConsoleContext, request: FastifyRequest, user: { id: string; email: string }, input: SecondFactorInput, endpoint: string): Promise<SecondFactorMethod> {
  const { db } = ctx;
  if ((input.code === undefined) === (input.recovery_code === undefined)) throw new ApiError('VALIDATION_FAILED', 'Send either code or recovery_code');
  const me = { id: user.id, email: user.email };
  const method = await throttleAudited(db, request, user.email, endpoint, () =>
    ctx.throttle.check({ account: mfaSubject(user.email), address: addressSubject(request.ip) }, async (): Promise<SecondFactorMethod | null> => {
      if (input.code !== undefined) {
        const totp = await getTotp(db, user.id);
        if (!totp?.confirmed_at) return null;
        const step = matchTotp(totp.secret, input.code, ctx.now(), totp.last_step);
        // The guarded update: of two requests with one code, one wins.
        return step !== null && (await acceptStep(db, user.id, step)) ? 'totp' : null;
      }
      const spent = await audited(
        db,
        (trx) => spendRecoveryCode(trx, user.id, normalizeRecoveryCode(input.recovery_code as string)),
        (ok) => (ok ? securityEntry(request, user.id, me, 'user.mfa_recovery_code_used', { type: 'user', id: user.id, name: user.email }, { endpoint }) : null),
      );
      return spent ? 'recovery_code' : null;
    }),
  );
  if (method === null) {
    await writeAudit(db, securityEntry(request, user.id, me, 'session.mfa_failed', { type: 'user', id: user.id, name: user.email }, { endpoint, method: input.code !== undefined ? 'totp' : 'recovery_code' }));
    throw new ApiError('INVALID_MFA_CODE');
  }
  return method;
}

/** Throws MFA_CHECK_REQUIRED unless a user with TOTP passed a second-factor check in this session within FRESH_MFA_SECONDS. */
export async function requireFreshSecondFactor(ctx: ConsoleContext, request: FastifyRequest): Promise<void> {
  const u = userOf(request);
  if (!(await hasTotp(ctx.db, u.id))) return;
  if (!(await sessionVerifiedWithin(ctx.db, u.sessionId, FRESH_MFA_SECONDS))) {
    throw new ApiError('MFA_CHECK_REQUIRED', `Confirm with a current authentication code first (POST /me/mfa/verify); it counts for ${FRESH_MFA_SECONDS / 60} minutes`);
  }
}

/**
 * preHandler of the console: on organisation routes (`<apiPrefix>/orgs/:org…`), a member of
 * an organisation that requires a second factor and who has none is refused with
 * MFA_ENROLLMENT_REQUIRED. Outsiders pass (the route answers them 404).
 */
export function orgMfaGate(ctx: ConsoleContext, apiPrefix: string) {
  const orgRoutes = `${apiPrefix}/orgs/:org`;
  return async function mfaGate(request: FastifyRequest): Promise<void> {
    const url = request.routeOptions.url;
    if (!request.consoleUser || url === undefined || !(url === orgRoutes || url.startsWith(`${orgRoutes}/`))) return;
    const { org } = request.params as { org: string };
    if (await mfaBlocksMember(ctx.db, request.consoleUser.id, org)) throw new ApiError('MFA_ENROLLMENT_REQUIRED');
  };
}

const PasswordBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) }, { additionalProperties: false });
const CodeBody = Type.Object({ code: Type.String({ minLength: 6, maxLength: 10 }) }, { additionalProperties: false });
const SecondFactorBody = Type.Object(SecondFactorFields, { additionalProperties: false });
const DisableBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }), ...SecondFactorFields }, { additionalProperties: false });
const OrgParams = Type.Object({ org: Type.String({ minLength: 1, maxLength: 200 }) });
const RequirementBody = Type.Object({ required: Type.Boolean() }, { additionalProperties: false });

/** The account's second-factor routes and the organisation's requirement. */
export function mfaRoutes(ctx: ConsoleContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const { db } = ctx;
    app.addHook('onRequest', requireSession(db));
    const schema = (summary: string, parts: Record<string, unknown> = {}) => ({ tags: [TAG], summary, security: SECURITY, ...parts });
    const target = (u: { id: string; email: string }) => ({ type: 'user' as const, id: u.id, name: u.email });

    /** The signed-in user's password, checked under the throttle in the sign-in's buckets; INVALID_CREDENTIALS when wrong. */
    async function checkPassword(request: FastifyRequest, password: string, endpoint: string) {
      const user = await getUser(db, userOf(request).id);
      const ok = await throttleAudited(db, request, user.email, endpoint, () =>
        ctx.throttle.check({ account: accountSubject(user.email), address: addressSubject(request.ip) }, async () =>
          (await ctx.passwords.verify(password, user.password_hash)) ? user : null,
        ),
      );
      if (!ok) throw new ApiError('INVALID_CREDENTIALS', 'The password is wrong');
      return user;
    }

    // Every route here is signed in; an unsafe one also reads a body and checks CSRF for cookie sessions.
    const unsafe = [...CODES.session, ...CODES.body, ...CODES.csrf];
    const mfaStatusSchema = schema('Your second factor: none, pending (enrollment not confirmed) or active, and recovery codes left', {
      operationId: 'consoleGetMfa',
      response: consoleResponses({ 200: refTo(ConsoleMfaStatus) }, CODES.session),
    });
    app.get('/me/mfa', { schema: mfaStatusSchema }, async (request): Promise<ConsoleMfaStatus> => {
      const u = userOf(request);
      const totp = await getTotp(db, u.id);
      return {
        totp: totp === null ? 'none' : totp.confirmed_at === null ? 'pending' : 'active',
        recovery_codes_left: totp?.confirmed_at ? await recoveryCodesLeft(db, u.id) : 0,
        session_verified_recently: await sessionVerifiedWithin(db, u.sessionId, FRESH_MFA_SECONDS),
      };
    });

    app.post(
      '/me/mfa/totp',
      {
        schema: schema('Start TOTP enrollment (needs the password): a new secret, active only once confirmed with a code', {
          operationId: 'consoleStartTotp',
          body: PasswordBody,
          response: consoleResponses({ 200: TotpEnrollment }, unsafe, CODES.password, ['CONFLICT']),
        }),
      },
      async (request, reply) => {
        const u = userOf(request);
        // The password, throttled like a sign-in: a stolen session alone cannot put its own device on the account.
        await checkPassword(request, (request.body as { password: string }).password, 'me/mfa/totp');
        const secret = newTotpSecret();
        if (!(await startEnrollment(db, u.id, secret))) throw new ApiError('CONFLICT', 'Two-factor authentication is already on; turn it off first to set up another device');
        void reply.header('Cache-Control', 'no-store');
        return { secret, otpauth_uri: otpauthUri(secret, u.email, TOTP_ISSUER) };
      },
    );

    app.post(
      '/me/mfa/totp/confirm',
      {
        schema: schema('Confirm enrollment with a current code: TOTP becomes active; the 10 recovery codes are in this answer only', {
          operationId: 'consoleConfirmTotp',
          body: CodeBody,
          response: consoleResponses({ 200: TotpConfirmed }, unsafe, ['CONFLICT', 'INVALID_MFA_CODE']),
        }),
      },
      async (request, reply) => {
        const u = userOf(request);
        const { code } = request.body as { code: string };
        const totp = await getTotp(db, u.id);
        if (!totp || totp.confirmed_at !== null) throw new ApiError('CONFLICT', totp ? 'Two-factor authentication is already on' : 'Start enrollment first (POST /me/mfa/totp)');
        const step = matchTotp(totp.secret, code, ctx.now(), null);
        if (step === null) {
          await writeAudit(db, securityEntry(request, u.id, { id: u.id, email: u.email }, 'session.mfa_failed', target(u), { endpoint: 'me/mfa/totp/confirm', method: 'totp' }));
          throw new ApiError('INVALID_MFA_CODE');
        }
        const codes = newRecoveryCodes();
        const ok = await audited(
          db,
          async (trx) => {
            const done = await confirmEnrollment(trx, u.id, step, codes.map(normalizeRecoveryCode));
            if (done) await markSessionVerified(trx, u.sessionId);
            return done;
          },
          (done) => (done ? securityEntry(request, u.id, { id: u.id, email: u.email }, 'user.mfa_enroll', target(u), { method: 'totp', recovery_codes: codes.length }) : null),
        );
        if (!ok) throw new ApiError('CONFLICT', 'Two-factor authentication is already on');
        void reply.header('Cache-Control', 'no-store');
        return { totp: 'active', recovery_codes: codes };
      },
    );

    app.post(
      '/me/mfa/totp/disable',
      {
        schema: schema('Turn TOTP off: needs the password and a current code or a recovery code', {
          operationId: 'consoleDisableTotp',
          body: DisableBody,
          response: consoleResponses({ 204: NoContent }, unsafe, CODES.password, CODES.secondFactor, ['CONFLICT']),
        }),
      },
      async (request, reply) => {
        const u = userOf(request);
        const body = request.body as SecondFactorInput & { password: string };
        if (!(await hasTotp(db, u.id))) throw new ApiError('CONFLICT', 'Two-factor authentication is not on');
        const user = await checkPassword(request, body.password, 'me/mfa/totp/disable');
        const method = await checkSecondFactor(ctx, request, user, body, 'me/mfa/totp/disable');
        await audited(
          db,
          (trx) => removeTotp(trx, u.id),
          (removed) => (removed ? securityEntry(request, u.id, { id: u.id, email: u.email }, 'user.mfa_disable', target(u), { method }) : null),
        );
        return reply.code(204).send();
      },
    );

    app.post(
      '/me/mfa/verify',
      {
        schema: schema(`Confirm with a current code (or a recovery code): this session counts as freshly checked for ${FRESH_MFA_SECONDS / 60} minutes (creating keys needs it)`, {
          operationId: 'consoleVerifyMfa',
          body: SecondFactorBody,
          response: consoleResponses({ 200: MfaVerified }, unsafe, CODES.secondFactor, ['CONFLICT']),
        }),
      },
      async (request) => {
        const u = userOf(request);
        if (!(await hasTotp(db, u.id))) throw new ApiError('CONFLICT', 'Two-factor authentication is not on');
        const method = await checkSecondFactor(ctx, request, u, request.body as SecondFactorInput, 'me/mfa/verify');
        await audited(
          db,
          (trx) => markSessionVerified(trx, u.sessionId),
          () => securityEntry(request, u.id, { id: u.id, email: u.email }, 'session.mfa_verify', { type: 'session', id: u.sessionId }, { method }),
        );
        return { verified: true, valid_for_seconds: FRESH_MFA_SECONDS };
      },
    );

    /** The organisation and the caller's role in it; 404 for outsiders. */
    async function orgAndRole(request: FastifyRequest): Promise<{ id: string; role: Role }> {
      const { org: ref } = request.params as { org: string };
      const u = userOf(request);
      let org;
      try {
        org = await resolveOrg(db, ref);
      } catch (err) {
        if (err instanceof NotFoundError) throw new ApiError('NOT_FOUND', `No organisation "${ref}"`);
        throw err;
      }
      const role = await roleIn(db, u.id, org.id);
      if (role === null) throw new ApiError('NOT_FOUND', `No organisation "${ref}"`);
      return { id: org.id, role };
    }

    const orgMfaSchema = schema('Whether the organisation requires two-factor authentication (every member)', {
      operationId: 'consoleGetOrgMfa',
      params: OrgParams,
      response: consoleResponses({ 200: OrgMfaRequirement }, CODES.session, CODES.org),
    });
    app.get('/orgs/:org/mfa', { schema: orgMfaSchema }, async (request) => {
      const { id } = await orgAndRole(request);
      return { mfa_required: await orgRequiresMfa(db, id) };
    });

    app.put(
      '/orgs/:org/mfa',
      {
        schema: schema('Require two-factor authentication of every member, or stop requiring it (owners)', {
          operationId: 'consoleSetOrgMfa',
          params: OrgParams,
          body: RequirementBody,
          response: consoleResponses({ 200: OrgMfaRequirement }, unsafe, CODES.org, ['FORBIDDEN_ROLE']),
        }),
      },
      async (request) => {
        const { id, role } = await orgAndRole(request);
        const u = userOf(request);
        if (role !== 'owner') throw new ApiError('FORBIDDEN_ROLE', `This needs the owner role; you are ${role}`);
        const { required } = request.body as { required: boolean };
        if (required && !(await hasTotp(db, u.id))) throw new ApiError('MFA_ENROLLMENT_REQUIRED', 'Turn on two-factor authentication for your own account first');
        await audited(
          db,
          (trx) => setOrgMfaRequired(trx, id, required),
          (before) => (before === required ? null : { orgId: id, actor: { id: u.id, email: u.email }, action: 'org.mfa_requirement', target: { type: 'org', id }, details: { from: before, to: required }, ip: request.ip }),
        );
        return { mfa_required: required };
      },
    );
  };
}
