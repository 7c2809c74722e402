/**
 * Inviting a member, and how the link reaches the invitee (issue 29). With SMTP configured
 * the link goes by e-mail only, sent inside the invitation's transaction: the inviting
 * admin never holds it, and a send that fails leaves nothing behind (no invitation, no
 * audit entry; an earlier link of the same e-mail keeps working), so the admin simply
 * retries. Without SMTP the link is handed back once, for the admin to pass on.
 */
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../api/errors.js';
import { createInvitation, type Actor, type Invitation } from '../store/invitations.js';
import type { Role } from '../store/users.js';
import type { ConsoleContext } from './context.js';
import { MailNotSent } from './mail.js';

/** Seconds a client waits before retrying after the mail server failed. */
export const MAIL_RETRY_AFTER_SECONDS = 60;

export type Invited = { invitation: Invitation; delivered: 'email' } | { invitation: Invitation; delivered: 'link'; url: string };

/** The invitation link: the token goes in the fragment, which no browser sends to a server (access logs, Referer). */
export const invitationUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/console/#/invite/${token}`;

export async function inviteMember(
  ctx: Pick<ConsoleContext, 'db' | 'mailer' | 'publicBaseUrl'>,
  input: { orgId: string; orgName: string; email: string; role: Role; inviter: Actor; ip: string },
  log: FastifyBaseLogger,
): Promise<Invited> {
  const { mailer } = ctx;
  if (!mailer) {
    const { invitation, token } = await createInvitation(ctx.db, { ...input, delivery: 'link' });
    return { invitation, delivered: 'link', url: invitationUrl(ctx.publicBaseUrl, token) };
  }
  try {
    const { invitation } = await createInvitation(ctx.db, {
      ...input,
      delivery: 'email',
      deliver: (inv, token) =>
        mailer.sendInvitation({ to: inv.email, orgName: input.orgName, role: inv.role, inviterEmail: input.inviter.email, url: invitationUrl(ctx.publicBaseUrl, token), expiresAt: inv.expires_at }),
    });
    return { invitation, delivered: 'email' };
  } catch (err) {
    if (!(err instanceof MailNotSent)) throw err;
    log.warn({ err: err.cause ?? err, org_id: input.orgId }, 'invitation e-mail not sent; no invitation created');
    if (err.recipientRefused) throw new ApiError('VALIDATION_FAILED', `The mail server refused the address ${input.email}; check it. No invitation was created.`);
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'The invitation e-mail could not be sent (the mail server is unreachable or did not take it); no invitation was created. Try again later.',
      {},
      { 'Retry-After': String(MAIL_RETRY_AFTER_SECONDS) },
    );
  }
}
