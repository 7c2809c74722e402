/**
 * Invitation e-mail over SMTP (issue 29): the console's adapter for nodemailer. It composes
 * the message (plain text and a simple HTML part) and hands it to the configured server;
 * it knows nothing of Fastify or the database. Transport security: `smtps://` is TLS from
 * the first byte; `smtp://` must upgrade with STARTTLS (refused otherwise), except to a
 * loopback host (a local relay, the test server). Certificates are verified (Node's CAs,
 * plus NODE_EXTRA_CA_CERTS).
 */
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';

/** A send that gives up after these leaves the inviting admin waiting no longer. */
const CONNECT_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 20_000;

export interface InvitationMail {
  to: string;
  orgName: string;
  role: string;
  inviterEmail: string;
  url: string;
  expiresAt: Date;
}

export interface Mailer {
  /** Resolves once the server accepted the message; rejects with MailNotSent otherwise. */
  sendInvitation(mail: InvitationMail): Promise<void>;
  close(): void;
}

/** The message was not accepted. `recipientRefused`: the server refused the address for good (retrying will not help). */
export class MailNotSent extends Error {
  constructor(
    message: string,
    readonly recipientRefused: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1';
}

/** nodemailer's options for SMTP_URL (validated by src/settings.ts). */
export function smtpOptions(smtpUrl: string): SMTPTransport.Options {
  const u = new URL(smtpUrl);
  const secure = u.protocol === 'smtps:';
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    port: u.port === '' ? (secure ? 465 : 587) : Number(u.port),
    secure,
    // STARTTLS or nothing: credentials and the invitation link never cross a network in clear.
    requireTLS: !secure && !isLoopback(host),
    auth: u.username === '' ? undefined : { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) },
    tls: { minVersion: 'TLSv1.2' },
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Subject, text and HTML of an invitation: who invites, to which organisation, as what, the link and its expiry. */
export function invitationMessage(m: InvitationMail): { subject: string; text: string; html: string } {
  const expires = `${m.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const subject = `${m.inviterEmail} invites you to ${m.orgName}`;
  const text = [
    `${m.inviterEmail} invites you to join the organisation ${m.orgName} as ${m.role} in the recognition service console.`,
    '',
    'Open this link to accept: you choose your own password, or accept with the account you already have.',
    '',
    m.url,
    '',
    `The link works once and expires ${expires}. If you did not expect this invitation, ignore this e-mail.`,
    '',
  ].join('\n');
  const e = escapeHtml;
  const html = [
    '<!doctype html><html><body>',
    `<p>${e(m.inviterEmail)} invites you to join the organisation <strong>${e(m.orgName)}</strong> as <strong>${e(m.role)}</strong> in the recognition service console.</p>`,
    '<p>Open this link to accept: you choose your own password, or accept with the account you already have.</p>',
    `<p><a href="${e(m.url)}">${e(m.url)}</a></p>`,
    `<p>The link works once and expires ${e(expires)}. If you did not expect this invitation, ignore this e-mail.</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/**
 * SMTP_URL is read at once, so a bad one stops the start; nodemailer itself is loaded with
 * the first e-mail, not at start: its modules are heap that every full garbage collection
 * of the API process would walk (docs/performance.md, issue 30).
 */
export function createSmtpMailer(options: { url: string; from: string }): Mailer {
  const smtp = smtpOptions(options.url);
  let transport: Promise<Transporter<SMTPTransport.SentMessageInfo>> | undefined;
  const open = (): Promise<Transporter<SMTPTransport.SentMessageInfo>> =>
    (transport ??= import('nodemailer').then(
      ({ default: nodemailer }) => nodemailer.createTransport(smtp),
      (err: unknown) => {
        // Not cached: the next e-mail tries again.
        transport = undefined;
        throw err;
      },
    ));
  return {
    async sendInvitation(mail) {
      const { subject, text, html } = invitationMessage(mail);
      try {
        const transporter = await open();
        // No file or URL access: the message is exactly what is composed here.
        await transporter.sendMail({ from: options.from, to: mail.to, subject, text, html, disableFileAccess: true, disableUrlAccess: true });
      } catch (err) {
        const { code, command, responseCode } = err as { code?: string; command?: string; responseCode?: number };
        const recipientRefused = code === 'EENVELOPE' && command === 'RCPT TO' && responseCode !== undefined && responseCode >= 500;
        throw new MailNotSent(`the mail server did not take the invitation e-mail (${code ?? 'error'}${responseCode ? ` ${responseCode}` : ''})`, recipientRefused, { cause: err });
      }
    },
    close() {
      void transport?.then(
        (t) => t.close(),
        () => {},
      );
    },
  };
}
