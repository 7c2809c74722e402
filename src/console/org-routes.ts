/**
 * Organisation-scoped console routes (`:org` = name or id): the organisation, its keys,
 * usage, requests, feedback, members and audit log. Every route names the least role it
 * needs; a user who is not a member gets 404, as if the organisation did not exist.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../api/errors.js';
import { audited, writeAudit, type AuditAction, type AuditEntry } from '../store/audit.js';
import { feedbackCounts, latestRequests, monthlyUsageByKey, usageByDay } from '../store/console-usage.js';
import { ConflictError, NotFoundError, isUuid } from '../store/db.js';
import { createKey, getKey, listKeys, transitionKey, updateKey, type ApiKey, type KeyFields } from '../store/keys.js';
import { resolveOrg, type Organization } from '../store/orgs.js';
import { getPendingInvitation, listPendingInvitations, revokeInvitation, type Invitation } from '../store/invitations.js';
import { keyClasses } from '../recognition/key-classes.js';
import { changeMember, emailProblem, listMembers, roleIn, type Role } from '../store/users.js';
import { AuditQuery, auditFilterOf, sendAudit } from './audit-view.js';
import { SECURITY, TAG, type ConsoleContext } from './context.js';
import { inviteMember } from './invitation-delivery.js';
import { requireFreshSecondFactor } from './mfa.js';
import {
  AuditAnswer, CODES, ConsoleFeedback, ConsoleInvitation, ConsoleKey, ConsoleMember, ConsoleOrganization, ConsoleRequest, ConsoleRole, ConsoleUsage, ConsoleUser,
  LEAST_ROLE, NoContent, answer, atLeast, consoleResponses, refTo,
} from './schemas.js';
import { requireSession, userOf } from './session-auth.js';

const OrgParams = Type.Object({ org: Type.String({ minLength: 1, maxLength: 200 }) });
const KeyParams = Type.Object({ org: Type.String({ minLength: 1, maxLength: 200 }), id: Type.String({ maxLength: 64 }) });
const MemberParams = Type.Object({ org: Type.String({ minLength: 1, maxLength: 200 }), userId: Type.String({ maxLength: 64 }) });

const Classes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500 });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const keyFieldSchemas = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(Type.String({ maxLength: 2000 })),
  classes: Classes,
  monthly_quota: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
  expires_at: Nullable(Type.String({ maxLength: 40, description: 'ISO-8601 date-time' })),
  rate_limit_per_minute: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'null: the service default' })),
};
const CreateKeyBody = Type.Object(
  {
    name: keyFieldSchemas.name,
    description: Type.Optional(keyFieldSchemas.description),
    classes: keyFieldSchemas.classes,
    monthly_quota: Type.Optional(keyFieldSchemas.monthly_quota),
    expires_at: Type.Optional(keyFieldSchemas.expires_at),
    rate_limit_per_minute: Type.Optional(keyFieldSchemas.rate_limit_per_minute),
  },
  { additionalProperties: false },
);
const UpdateKeyBody = Type.Partial(Type.Object(keyFieldSchemas), { additionalProperties: false, minProperties: 1 });
type KeyBody = Static<typeof UpdateKeyBody>;

const RoleSchema = refTo(ConsoleRole);
// No password: the invitee chooses their own when accepting (issue 29); a body that still sends one is refused.
const AddMemberBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }), role: RoleSchema }, { additionalProperties: false });
const InvitationParams = Type.Object({ org: Type.String({ minLength: 1, maxLength: 200 }), id: Type.String({ maxLength: 64 }) });
const ChangeMemberBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });

// Query strings arrive as text (the app's validator does not coerce): digits, bounded by intParam.
const Digits = (description: string) => Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description }));
const DaysQuery = (extra: Record<string, TSchema> = {}) => Type.Object({ days: Digits('1 to 366, default 30'), ...extra }, { additionalProperties: false });
const LimitQuery = (max: number) => Type.Object({ limit: Digits(`1 to ${max}`) }, { additionalProperties: false });

function intParam(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new ApiError('VALIDATION_FAILED', `${name} must be a whole number from 1 to ${max}`);
  return n;
}

const iso = (d: Date | null | undefined) => (d == null ? null : new Date(d).toISOString());

export function orgRoutes(ctx: ConsoleContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const { db } = ctx;
    app.addHook('onRequest', requireSession(db));

    async function access(request: FastifyRequest, least: Role): Promise<{ org: Organization; role: Role }> {
      const { org: ref } = request.params as { org: string };
      const user = userOf(request);
      let org: Organization;
      try {
        org = await resolveOrg(db, ref);
      } catch (err) {
        if (err instanceof NotFoundError) throw new ApiError('NOT_FOUND', `No organisation "${ref}"`);
        throw err;
      }
      const role = await roleIn(db, user.id, org.id);
      if (role === null) throw new ApiError('NOT_FOUND', `No organisation "${ref}"`);
      if (!atLeast(role, least)) throw await forbidden(request, org.id, role, `This needs the ${least} role or higher; you are ${role}`);
      return { org, role };
    }

    /** A refused role is a security event of the organisation: audited (a plain insert, nothing changed), then answered 403. */
    async function forbidden(request: FastifyRequest, orgId: string, role: Role, message: string): Promise<ApiError> {
      await writeAudit(db, entry(request, orgId, 'access.forbidden_role', { type: 'org', id: orgId }, { method: request.method, route: request.routeOptions.url, role, message }));
      return new ApiError('FORBIDDEN_ROLE', message);
    }

    async function keyOf(orgId: string, id: string): Promise<ApiKey> {
      if (!isUuid(id)) throw new ApiError('NOT_FOUND', `No key "${id}"`);
      try {
        const key = await getKey(db, id);
        if (key.org_id !== orgId) throw new NotFoundError();
        return key;
      } catch (err) {
        if (err instanceof NotFoundError) throw new ApiError('NOT_FOUND', `No key "${id}"`);
        throw err;
      }
    }

    function keyView(k: ApiKey, used: number): ConsoleKey {
      return {
        id: k.id,
        name: k.name,
        description: k.description,
        prefix: k.prefix,
        status: k.status,
        classes: k.classes,
        monthly_quota: k.monthly_quota,
        used_this_month: used,
        rate_limit_per_minute: k.rate_limit_per_minute ?? ctx.defaultRateLimitPerMinute,
        rate_limit_is_default: k.rate_limit_per_minute === null,
        last_used_at: iso(k.last_used_at),
        created_at: iso(k.created_at) as string,
        expires_at: iso(k.expires_at),
      };
    }

    async function usedThisMonth(orgId: string, keyId: string): Promise<number> {
      return (await monthlyUsageByKey(db, orgId)).get(keyId) ?? 0;
    }

    async function toFields(body: KeyBody): Promise<KeyFields> {
      const f: KeyFields = {};
      if (body.name !== undefined) {
        if (body.name.trim() === '') throw new ApiError('VALIDATION_FAILED', 'name must not be blank');
        f.name = body.name;
      }
      if (body.description !== undefined) f.description = body.description === '' ? null : body.description;
      if (body.classes !== undefined) f.classes = await checkClasses(body.classes);
      if (body.monthly_quota !== undefined) f.monthlyQuota = body.monthly_quota;
      if (body.rate_limit_per_minute !== undefined) f.rateLimitPerMinute = body.rate_limit_per_minute;
      if (body.expires_at !== undefined) {
        if (body.expires_at === null) f.expiresAt = null;
        else {
          const d = new Date(body.expires_at);
          if (!/^\d{4}-\d{2}-\d{2}/.test(body.expires_at) || Number.isNaN(d.getTime())) throw new ApiError('VALIDATION_FAILED', 'expires_at must be an ISO-8601 date-time such as 2027-01-31T00:00:00Z');
          f.expiresAt = d;
        }
      }
      return f;
    }

    async function checkClasses(list: string[]): Promise<string[]> {
      const checked = await keyClasses(list, () => ctx.labels());
      if ('problem' in checked) throw new ApiError('VALIDATION_FAILED', `classes: ${checked.problem}`);
      return checked.classes;
    }

    function entry(request: FastifyRequest, orgId: string, action: AuditAction, target: AuditEntry['target'], details?: Record<string, unknown>): AuditEntry {
      const u = userOf(request);
      return { orgId, actor: { id: u.id, email: u.email }, action, target, details, ip: request.ip };
    }

    /** Store errors of a key change as contract errors. */
    async function storeCall<T>(fn: () => Promise<T>): Promise<T> {
      try {
        return await fn();
      } catch (err) {
        if (err instanceof ConflictError) throw new ApiError('CONFLICT', err.message);
        if (err instanceof NotFoundError) throw new ApiError('NOT_FOUND', err.message);
        throw err;
      }
    }

    /**
     * An organisation route's schema: its answers, and its errors beyond the session's and the
     * organisation's (an unsafe method adds its body's and CSRF's).
     */
    const schema = (operationId: string, summary: string, unsafe: boolean, success: Record<number, TSchema>, codes: ErrorCode[], parts: Record<string, unknown> = {}) => ({
      operationId,
      tags: [TAG],
      summary,
      security: SECURITY,
      params: OrgParams,
      response: consoleResponses(success, CODES.session, CODES.org, unsafe ? [...CODES.body, ...CODES.csrf] : [], codes),
      ...parts,
    });
    const KeyAnswer = answer({ key: refTo(ConsoleKey) });
    const keyAnswer = (key: ConsoleKey): Static<typeof KeyAnswer> => ({ key });

    app.get('/orgs/:org', { schema: schema('consoleGetOrg', 'The organisation (every member)', false, { 200: refTo(ConsoleOrganization) }, []) }, async (request): Promise<ConsoleOrganization> => {
      const { org, role } = await access(request, 'viewer');
      return { id: org.id, name: org.name, status: org.status, balance: org.balance, created_at: iso(org.created_at) as string, role };
    });

    const KeyList = answer({ keys: Type.Array(refTo(ConsoleKey)) });
    app.get('/orgs/:org/keys', { schema: schema('consoleListKeys', "The organisation's API keys", false, { 200: KeyList }, []) }, async (request): Promise<Static<typeof KeyList>> => {
      const { org } = await access(request, LEAST_ROLE.read);
      const [keys, used] = await Promise.all([listKeys(db, org.id), monthlyUsageByKey(db, org.id)]);
      return { keys: keys.map((k) => keyView(k, used.get(k.id) ?? 0)) };
    });

    const NewKey = answer({ key: refTo(ConsoleKey), secret: Type.String({ description: 'The key itself (x-api-key): in this answer only.' }) });
    const createKeySchema = schema('consoleCreateKey', 'Create a key; its secret is in this answer only', true, { 201: NewKey }, ['FORBIDDEN_ROLE', 'MFA_CHECK_REQUIRED', 'CONFLICT'], { body: CreateKeyBody });
    app.post('/orgs/:org/keys', { schema: createKeySchema }, async (request, reply) => {
      const { org } = await access(request, LEAST_ROLE.manageKeys);
      // A user with a second factor confirms it (within 10 minutes, in this session) before a new secret is handed out.
      await requireFreshSecondFactor(ctx, request);
      const body = request.body as Static<typeof CreateKeyBody>;
      const fields = await toFields(body);
      const { key, record } = await storeCall(() =>
        audited(
          db,
          (trx) => createKey(trx, { ...fields, orgId: org.id, name: body.name, monthlyQuota: fields.monthlyQuota ?? ctx.defaultMonthlyQuota }),
          ({ record: r }) => entry(request, org.id, 'key.create', { type: 'key', id: r.id, name: r.name }, { prefix: r.prefix, classes: r.classes }),
        ),
      );
      void reply.header('Cache-Control', 'no-store');
      const created: Static<typeof NewKey> = { key: keyView(record, 0), secret: key };
      return reply.code(201).send(created);
    });

    app.get('/orgs/:org/keys/:id', { schema: schema('consoleGetKey', 'One key', false, { 200: KeyAnswer }, [], { params: KeyParams }) }, async (request) => {
      const { org } = await access(request, LEAST_ROLE.read);
      const key = await keyOf(org.id, (request.params as { id: string }).id);
      return keyAnswer(keyView(key, await usedThisMonth(org.id, key.id)));
    });

    const updateKeySchema = schema('consoleUpdateKey', 'Change a key', true, { 200: KeyAnswer }, ['FORBIDDEN_ROLE', 'CONFLICT'], { params: KeyParams, body: UpdateKeyBody });
    app.patch('/orgs/:org/keys/:id', { schema: updateKeySchema }, async (request) => {
      const { org } = await access(request, LEAST_ROLE.manageKeys);
      const before = await keyOf(org.id, (request.params as { id: string }).id);
      const body = request.body as KeyBody;
      const fields = await toFields(body);
      const after = await storeCall(() =>
        audited(db, (trx) => updateKey(trx, before.id, fields), (k) => entry(request, org.id, 'key.update', { type: 'key', id: k.id, name: k.name }, { changed: body })),
      );
      return keyAnswer(keyView(after, await usedThisMonth(org.id, after.id)));
    });

    for (const action of ['suspend', 'resume', 'revoke'] as const) {
      const Action = `${action[0].toUpperCase()}${action.slice(1)}`;
      const actionSchema = schema(`console${Action}Key`, `${Action} a key${action === 'revoke' ? ' (final)' : ''}`, true, { 200: KeyAnswer }, ['FORBIDDEN_ROLE', 'CONFLICT'], { params: KeyParams });
      app.post(`/orgs/:org/keys/:id/${action}`, { schema: actionSchema }, async (request) => {
        const { org } = await access(request, LEAST_ROLE.manageKeys);
        const before = await keyOf(org.id, (request.params as { id: string }).id);
        const { key: after } = await storeCall(() =>
          audited(
            db,
            (trx) => transitionKey(trx, before.id, action),
            ({ from, key: k }) => (k.status !== from ? entry(request, org.id, `key.${action}`, { type: 'key', id: k.id, name: k.name }, { from, to: k.status }) : null),
          ),
        );
        return keyAnswer(keyView(after, await usedThisMonth(org.id, after.id)));
      });
    }

    const usageSchema = schema('consoleGetUsage', 'Requests per day (DONE, ERROR, refused), quota and balance', false, { 200: refTo(ConsoleUsage) }, [], {
      querystring: DaysQuery({ key_id: Type.Optional(Type.String({ maxLength: 64, description: 'One key (404 when it is not of this organisation)' })) }),
    });
    app.get('/orgs/:org/usage', { schema: usageSchema }, async (request): Promise<ConsoleUsage> => {
      const { org } = await access(request, LEAST_ROLE.read);
      const q = request.query as { days?: string; key_id?: string };
      const days = intParam(q.days, 'days', 30, 366);
      const used = await monthlyUsageByKey(db, org.id);
      let quota: { month: string; limit: number; used: number };
      const month = new Date().toISOString().slice(0, 7);
      if (q.key_id !== undefined) {
        const key = await keyOf(org.id, q.key_id);
        quota = { month, limit: key.monthly_quota, used: used.get(key.id) ?? 0 };
      } else {
        const live = (await listKeys(db, org.id)).filter((k) => k.status !== 'revoked');
        quota = { month, limit: live.reduce((s, k) => s + k.monthly_quota, 0), used: [...used.values()].reduce((s, n) => s + n, 0) };
      }
      return { days: await usageByDay(db, org.id, days, q.key_id), quota, balance: org.balance };
    });

    const RequestList = answer({ requests: Type.Array(refTo(ConsoleRequest)) }, 'Newest first.');
    const requestsSchema = schema('consoleListKeyRequests', "A key's latest requests", false, { 200: RequestList }, [], { params: KeyParams, querystring: LimitQuery(200) });
    app.get('/orgs/:org/keys/:id/requests', { schema: requestsSchema }, async (request): Promise<Static<typeof RequestList>> => {
      const { org } = await access(request, LEAST_ROLE.read);
      const key = await keyOf(org.id, (request.params as { id: string }).id);
      const rows = await latestRequests(db, key.id, intParam((request.query as { limit?: string }).limit, 'limit', 50, 200));
      return {
        requests: rows.map((r) => ({
          id: r.id,
          external_id: r.external_id,
          kind: r.kind,
          status: r.status as ConsoleRequest['status'],
          created_at: iso(r.created_at) as string,
          processing_time_ms: r.processing_time_ms,
          image_url: r.image_stored ? ctx.signer.sign(r.id) : null,
          results: r.results,
          error: r.error,
          response_code: r.response_code,
          feedback: r.feedback === null ? null : Number(r.feedback),
        })),
      };
    });

    const feedbackSchema = schema('consoleGetFeedback', 'Feedback ratings (-1 bad, 0 neutral, 1 good) per label and per day', false, { 200: refTo(ConsoleFeedback) }, [], { querystring: DaysQuery() });
    app.get('/orgs/:org/feedback', { schema: feedbackSchema }, async (request): Promise<ConsoleFeedback> => {
      const { org } = await access(request, LEAST_ROLE.read);
      return feedbackCounts(db, org.id, intParam((request.query as { days?: string }).days, 'days', 30, 366));
    });

    const MemberList = answer({ members: Type.Array(refTo(ConsoleMember)) });
    app.get('/orgs/:org/members', { schema: schema('consoleListMembers', 'Members and their roles', false, { 200: MemberList }, []) }, async (request): Promise<Static<typeof MemberList>> => {
      const { org } = await access(request, LEAST_ROLE.read);
      const members = await listMembers(db, org.id);
      return { members: members.map((m) => ({ user: m.user, role: m.role, created_at: iso(m.created_at) as string })) };
    });

    function invitationView(i: Invitation): ConsoleInvitation {
      return {
        id: i.id,
        email: i.email,
        role: i.role,
        invited_by: { id: i.invited_by, email: i.invited_by_email },
        created_at: iso(i.created_at) as string,
        expires_at: iso(i.expires_at) as string,
      };
    }

    const Invited = answer({
      invitation: refTo(ConsoleInvitation),
      delivered: Type.Union([Type.Literal('email'), Type.Literal('link')], { description: 'email: the link went to the invitee; link: it is in invitation_url, once' }),
      invitation_url: Type.Optional(Type.String({ description: 'The one-time link (delivered: link only).' })),
    });
    app.post(
      '/orgs/:org/members',
      {
        schema: schema('consoleInviteMember', 'Invite a member: a one-time link, e-mailed to the invitee (SMTP configured) or shown only in this answer', true, { 201: Invited }, ['FORBIDDEN_ROLE', 'CONFLICT'], {
          description:
            'Creates an invitation; the invitee sets their own password (no account yet) or accepts as their existing account. The answer is the same whether or not the e-mail has an account. An earlier pending invitation of the same e-mail here is revoked. With SMTP configured (SMTP_URL) the link is e-mailed to the invitee and is not in the answer (`delivered: "email"`); a failed send creates nothing and answers 503 SERVICE_UNAVAILABLE with Retry-After (400 VALIDATION_FAILED when the mail server refuses the address). Without SMTP the answer has the link, once (`delivered: "link"`, `invitation_url`).',
          body: AddMemberBody,
        }),
      },
      async (request, reply) => {
        const { org, role: myRole } = await access(request, LEAST_ROLE.manageMembers);
        const body = request.body as { email: string; role: Role };
        if (body.role === 'owner' && myRole !== 'owner') throw await forbidden(request, org.id, myRole, 'Only an owner can make someone owner');
        const problem = emailProblem(body.email.trim());
        if (problem) throw new ApiError('VALIDATION_FAILED', problem);
        const u = userOf(request);
        const invited = await storeCall(() =>
          inviteMember(ctx, { orgId: org.id, orgName: org.name, email: body.email, role: body.role, inviter: { id: u.id, email: u.email }, ip: request.ip }, request.log),
        );
        void reply.header('Cache-Control', 'no-store');
        const invitation = invitationView(invited.invitation);
        const sent: Static<typeof Invited> = invited.delivered === 'email' ? { invitation, delivered: 'email' } : { invitation, delivered: 'link', invitation_url: invited.url };
        return reply.code(201).send(sent);
      },
    );

    const InvitationList = answer({ invitations: Type.Array(refTo(ConsoleInvitation)) });
    const invitationsSchema = schema('consoleListInvitations', 'Pending invitations (owners and admins)', false, { 200: InvitationList }, ['FORBIDDEN_ROLE']);
    app.get('/orgs/:org/invitations', { schema: invitationsSchema }, async (request): Promise<Static<typeof InvitationList>> => {
      const { org } = await access(request, LEAST_ROLE.manageMembers);
      return { invitations: (await listPendingInvitations(db, org.id)).map(invitationView) };
    });

    app.delete(
      '/orgs/:org/invitations/:id',
      { schema: schema('consoleRevokeInvitation', 'Revoke a pending invitation (an owner for an owner invitation)', true, { 204: NoContent }, ['FORBIDDEN_ROLE'], { params: InvitationParams }) },
      async (request, reply) => {
        const { org, role: myRole } = await access(request, LEAST_ROLE.manageMembers);
        const { id } = request.params as { id: string };
        const inv = await storeCall(() => getPendingInvitation(db, org.id, id));
        if (inv.role === 'owner' && myRole !== 'owner') throw await forbidden(request, org.id, myRole, 'Only an owner can revoke an invitation to be owner');
        const u = userOf(request);
        await storeCall(() => revokeInvitation(db, org.id, inv.id, { id: u.id, email: u.email }, request.ip));
        return reply.code(204).send();
      },
    );

    /** The change and its audit entry (`entryFor` sees the role before and the member's e-mail) in one transaction. */
    async function memberChange(
      request: FastifyRequest,
      change: { role: Role } | { remove: true },
      entryFor: (orgId: string, r: { before: Role; email: string; userId: string }) => AuditEntry | null,
    ): Promise<{ orgId: string; before: Role; email: string; userId: string }> {
      const { userId } = request.params as { userId: string };
      const me = userOf(request);
      const self = userId === me.id;
      // Anyone may leave; changing others needs admin, and owners are changed only by owners.
      const { org, role: myRole } = await access(request, self && 'remove' in change ? 'viewer' : LEAST_ROLE.manageMembers);
      if (!isUuid(userId)) throw new ApiError('NOT_FOUND', 'No such member');
      const target = await roleIn(db, userId, org.id);
      if (target === null) throw new ApiError('NOT_FOUND', 'No such member');
      if ((target === 'owner' || ('role' in change && change.role === 'owner')) && myRole !== 'owner' && !(self && 'remove' in change)) {
        throw await forbidden(request, org.id, myRole, 'Only an owner can change an owner or make someone owner');
      }
      const r = await storeCall(() =>
        audited(
          db,
          async (trx) => {
            const before = await changeMember(trx, org.id, userId, change);
            const email = (await trx('users').where({ id: userId }).first<{ email: string } | undefined>('email'))?.email ?? userId;
            return { before, email, userId };
          },
          (done) => entryFor(org.id, done),
        ),
      );
      return { orgId: org.id, ...r };
    }

    const MemberChanged = answer({ member: answer({ user: refTo(ConsoleUser), role: RoleSchema }) });
    const changeMemberSchema = schema('consoleChangeMember', "Change a member's role", true, { 200: MemberChanged }, ['FORBIDDEN_ROLE', 'CONFLICT'], { params: MemberParams, body: ChangeMemberBody });
    app.patch('/orgs/:org/members/:userId', { schema: changeMemberSchema }, async (request): Promise<Static<typeof MemberChanged>> => {
      const { role } = request.body as { role: Role };
      const r = await memberChange(request, { role }, (orgId, m) =>
        m.before !== role ? entry(request, orgId, 'member.role_change', { type: 'member', id: m.userId, name: m.email }, { from: m.before, to: role }) : null,
      );
      return { member: { user: { id: r.userId, email: r.email }, role } };
    });

    const removeMemberSchema = schema('consoleRemoveMember', 'Remove a member (or leave); the last owner stays', true, { 204: NoContent }, ['FORBIDDEN_ROLE', 'CONFLICT'], { params: MemberParams });
    app.delete('/orgs/:org/members/:userId', { schema: removeMemberSchema }, async (request, reply) => {
      await memberChange(request, { remove: true }, (orgId, m) => entry(request, orgId, 'member.remove', { type: 'member', id: m.userId, name: m.email }, { role: m.before }));
      return reply.code(204).send();
    });

    app.get(
      '/orgs/:org/audit',
      {
        schema: schema('consoleGetAudit', 'The audit log, newest first, filtered; or all of it as JSON lines (owners and admins)', false, { 200: AuditAnswer }, ['FORBIDDEN_ROLE'], {
          description:
            'Filters: `action` (comma-separated, `key.*` for a prefix), `actor` (e-mail or user id; `recog CLI` for the server CLI), `since` (inclusive) and `until` (exclusive) as ISO-8601 date-times, `before` (an entry id: older ones, for paging). `format=jsonl` answers every matching entry, one JSON object per line (`application/x-ndjson`), streamed; `limit` and `before` still apply when given.',
          querystring: AuditQuery,
        }),
      },
      async (request, reply: FastifyReply) => {
        const { org } = await access(request, LEAST_ROLE.readAudit);
        return sendAudit(db, reply, { orgId: org.id }, auditFilterOf(request.query as Record<string, string | undefined>), `audit-${org.name}`);
      },
    );
  };
}
