/**
 * Invitations from the invitee's side: no session needed, the token is the credential.
 * `inspect` says what the invitation is for (and, to the token's holder only, whether the
 * e-mail has an account); `accept` spends it. A new account gets the invitee's own password;
 * an existing account accepts signed in as itself, or with its password in the call
 * (throttled like a sign-in).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';
import { ConflictError, NotFoundError } from '../store/db.js';
import { acceptInvitation, invitationByToken, WrongAccountError, type AcceptAs } from '../store/invitations.js';
import { hasTotp } from '../store/mfa.js';
import { findUserByEmail } from '../store/users.js';
import { TAG, type ConsoleContext } from './context.js';
import { MAX_PASSWORD_LENGTH, passwordProblem } from './passwords.js';
import { CODES, ConsoleInvitationInfo, ConsoleRole, ConsoleUser, answer, consoleResponses, refTo } from './schemas.js';
import { auditFailedSignIn, throttleAudited } from './security-events.js';
import { optionalSession } from './session-auth.js';
import { accountSubject, addressSubject } from './throttle.js';

const Token = Type.String({ minLength: 1, maxLength: 256, description: 'the token of the invitation link (after #/invite/)' });
const InspectBody = Type.Object({ token: Token }, { additionalProperties: false });
const AcceptBody = Type.Object(
  {
    token: Token,
    new_password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: 'no account yet: the password the invitee chooses' })),
    password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: "an existing account not signed in: that account's password" })),
  },
  { additionalProperties: false },
);

const Inspected = answer({ invitation: refTo(ConsoleInvitationInfo) });
const Accepted = answer({
  user: refTo(ConsoleUser),
  org: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }),
  role: refTo(ConsoleRole),
  new_account: Type.Boolean({ description: 'The account was created by this call.' }),
});

const GONE = 'No such invitation, or it was already used, revoked or has expired; ask for a new one';

export function invitationRoutes(ctx: ConsoleContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const { db } = ctx;

    app.post(
      '/invitations/inspect',
      {
        schema: {
          operationId: 'consoleInspectInvitation',
          tags: [TAG],
          summary: 'What an invitation link is for (no session needed)',
          body: InspectBody,
          response: consoleResponses({ 200: Inspected }, CODES.body, ['NOT_FOUND']),
        },
      },
      async (request): Promise<Static<typeof Inspected>> => {
        const inv = await invitationByToken(db, (request.body as Static<typeof InspectBody>).token);
        if (!inv) throw new ApiError('NOT_FOUND', GONE);
        return {
          invitation: {
            org: { name: inv.org_name },
            email: inv.email,
            role: inv.role,
            invited_by: inv.invited_by_email,
            expires_at: inv.expires_at.toISOString(),
            new_account: !inv.account_exists,
          },
        };
      },
    );

    app.post(
      '/invitations/accept',
      {
        schema: {
          tags: [TAG],
          operationId: 'consoleAcceptInvitation',
          summary: 'Accept an invitation (single use)',
          description:
            'No account for the e-mail yet: send `new_password`; the account is created with it and joined to the organisation in one transaction. An existing account: be signed in as it (bearer, or cookies with x-csrf-token), or send its `password` (not for an account with a second factor: 403 MFA_CHECK_REQUIRED, sign in first). Then sign in as usual.',
          body: AcceptBody,
          // Signed in (optional): a cookie session needs the CSRF header, a temporary password is refused.
          response: consoleResponses({ 200: Accepted }, CODES.body, CODES.csrf, CODES.session, CODES.password, ['NOT_FOUND', 'MFA_CHECK_REQUIRED', 'CONFLICT']),
        },
      },
      async (request): Promise<Static<typeof Accepted>> => {
        const body = request.body as Static<typeof AcceptBody>;
        const inv = await invitationByToken(db, body.token);
        if (!inv) throw new ApiError('NOT_FOUND', GONE);
        let as: AcceptAs;
        if (!inv.account_exists) {
          if (body.new_password === undefined) throw new ApiError('VALIDATION_FAILED', 'new_password is required: choose the password of your new account');
          const problem = passwordProblem(body.new_password, inv.email);
          if (problem) throw new ApiError('VALIDATION_FAILED', problem);
          as = { newAccount: { passwordHash: await ctx.passwords.hash(body.new_password) } };
        } else if (body.password !== undefined) {
          const userId = await checkPassword(request, inv.email, body.password);
          // The password alone must not do for an account with a second factor: it signs in
          // (password and code) and accepts while signed in.
          if (await hasTotp(db, userId)) throw new ApiError('MFA_CHECK_REQUIRED', `${inv.email} has a second factor: sign in with it, then accept while signed in`);
          as = { userId };
        } else {
          const me = await optionalSession(db, request);
          if (!me) throw new ApiError('UNAUTHENTICATED', `Sign in as ${inv.email}, or send that account's password, to accept`);
          if (me.email.toLowerCase() !== inv.email.toLowerCase()) throw new ApiError('UNAUTHENTICATED', `This invitation is for ${inv.email}; you are signed in as another account`);
          as = { userId: me.id };
        }
        try {
          const r = await acceptInvitation(db, body.token, as, request.ip);
          return { user: r.user, org: r.org, role: r.role, new_account: r.newAccount };
        } catch (err) {
          if (err instanceof NotFoundError) throw new ApiError('NOT_FOUND', GONE);
          if (err instanceof ConflictError) throw new ApiError('CONFLICT', err.message);
          if (err instanceof WrongAccountError) throw new ApiError('UNAUTHENTICATED', err.message);
          throw err;
        }
      },
    );

    /** The id of the account with this e-mail when the password is its own; throttled, audited and answered like a sign-in. */
    async function checkPassword(request: FastifyRequest, email: string, password: string): Promise<string> {
      let account: { id: string } | null = null;
      const user = await throttleAudited(db, request, email, 'invitations/accept', () =>
        ctx.throttle.check({ account: accountSubject(email), address: addressSubject(request.ip) }, async () => {
          const found = (account = await findUserByEmail(db, email));
          if (!found) return ctx.passwords.burn(password).then(() => null);
          return (await ctx.passwords.verify(password, found.password_hash)) ? found : null;
        }),
      );
      if (!user) {
        await auditFailedSignIn(db, request, email, account, 'invitations/accept', 'invalid_credentials');
        throw new ApiError('INVALID_CREDENTIALS');
      }
      return user.id;
    }
  };
}
