/**
 * Invitation e-mail over SMTP (issue 29) against a real SMTP server, Mailpit (built by
 * scripts/mailpit.sh), on real PostgreSQL through the app: with SMTP_URL the link goes to the
 * invitee only (Mailpit's API shows the message; the answer has no link) and following it
 * joins the organisation; without SMTP the link is answered once; a mail server that is down
 * or refuses the address leaves no invitation behind. Plus the settings and the transport's
 * TLS rules, without a server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createSmtpMailer, invitationMessage, smtpOptions } from '../../src/console/mail.js';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';
import { freePort } from '../helpers/local-server.js';
import { findMailpit, startMailpit, type MailpitServer } from '../helpers/mailpit.js';

const FROM = 'Recognition console <console@cv.test>';
const TOKEN_IN_LINK = /http:\/\/cv\.test\/console\/#\/invite\/(rci_[A-Za-z0-9_-]{43})/;

describe('settings and transport rules (no server)', () => {
  test('SMTP_URL needs smtp:// or smtps:// and SMTP_FROM; the password never appears in a problem', () => {
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example:587' }), /SMTP_FROM is required with SMTP_URL/);
    assert.throws(() => loadConfig({ SMTP_URL: 'http://user:hunter2-secret@mail.example', SMTP_FROM: 'a@b.example' }), (err: Error) => {
      assert.match(err.message, /SMTP_URL must be smtp:\/\//);
      assert.doesNotMatch(err.message, /hunter2-secret/);
      return true;
    });
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example/path?x=1', SMTP_FROM: 'a@b.example' }), /SMTP_URL must be/);
    assert.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'no address here' }), /SMTP_FROM must be an e-mail address/);
    const c = loadConfig({ SMTP_URL: 'smtps://u%40x:p%3Ass@mail.example', SMTP_FROM: FROM });
    assert.equal(c.smtpFrom, FROM);
    assert.equal(loadConfig({}).smtpUrl, undefined);
  });

  test('STARTTLS is required to any host but loopback; smtps is TLS from the start; credentials are decoded', () => {
    const remote = smtpOptions('smtp://user:pa%24%24@mail.example');
    assert.equal(remote.requireTLS, true);
    assert.equal(remote.secure, false);
    assert.equal(remote.port, 587);
    assert.deepEqual(remote.auth, { user: 'user', pass: 'pa$$' });
    const tls = smtpOptions('smtps://mail.example');
    assert.equal(tls.secure, true);
    assert.equal(tls.port, 465);
    assert.equal(tls.requireTLS, false);
    assert.equal(tls.auth, undefined);
    for (const local of ['smtp://127.0.0.1:2525', 'smtp://localhost:25', 'smtp://[::1]:25']) assert.equal(smtpOptions(local).requireTLS, false, local);
    assert.equal(smtpOptions('smtp://[::1]:25').host, '::1');
  });

  test('an SMTP_URL whose credentials cannot be decoded is refused when the mailer is made, not at the first e-mail', () => {
    assert.throws(() => createSmtpMailer({ url: 'smtp://user:pa%zz@mail.example', from: FROM }), URIError);
    // Closing one that never sent anything is quiet.
    createSmtpMailer({ url: 'smtp://127.0.0.1:2525', from: FROM }).close();
  });

  test('the message escapes what it shows in HTML', () => {
    const m = invitationMessage({ to: 'x@y.example', orgName: '<b>acme</b>', role: 'viewer', inviterEmail: 'a&b@y.example', url: 'http://cv.test/console/#/invite/rci_x', expiresAt: new Date('2026-12-02T10:00:00Z') });
    assert.match(m.html, /&#60;b&#62;acme&#60;\/b&#62;/);
    assert.match(m.html, /a&#38;b@y\.example/);
    assert.doesNotMatch(m.html, /<b>acme/);
    assert.match(m.text, /<b>acme<\/b> as viewer/);
    assert.match(m.text, /expires 2026-12-02 10:00 UTC/);
  });
});

const found = findMailpit();
const skip = 'skip' in found ? found.skip : false;

describe('invitations over SMTP (real Mailpit)', { skip }, () => {
  let mail: MailpitServer;
  let smtp: TestApp;
  let plain: TestApp;
  const org: Record<'smtp' | 'plain', { id: string; name: string }> = {} as never;
  const admin: Record<'smtp' | 'plain', Tokens> = {} as never;

  before(async () => {
    // Mailpit refuses recipients outside accepted.example: the "address refused" case.
    mail = await startMailpit((found as { bin: string }).bin, ['--smtp-allowed-recipients', '@accepted\\.example$']);
    smtp = await buildTestApp({ SMTP_URL: mail.smtpUrl, SMTP_FROM: FROM });
    plain = await buildTestApp();
    for (const [k, t] of [['smtp', smtp], ['plain', plain]] as const) {
      const o = await createOrg(t.db, { name: `mail-${k}-${Date.now()}` });
      org[k] = { id: o.id, name: o.name };
      await consoleUser(t.db, `admin@${k}.example`, [{ orgId: o.id, role: 'admin' }]);
      admin[k] = await login(t.app, `admin@${k}.example`);
    }
  });
  after(async () => {
    await smtp?.close();
    await plain?.close();
    await mail?.close();
  });

  const invite = (t: TestApp, who: Tokens, orgId: string, email: string, role = 'member') =>
    t.app.inject({ method: 'POST', url: `${API}/orgs/${orgId}/members`, headers: bearer(who), payload: { email, role } });
  const post = (t: TestApp, url: string, payload: object) => t.app.inject({ method: 'POST', url: `${API}${url}`, payload });
  const pending = async (t: TestApp, who: Tokens, orgId: string) =>
    json<{ invitations: Array<{ email: string }> }>(await t.app.inject({ method: 'GET', url: `${API}/orgs/${orgId}/invitations`, headers: bearer(who) })).invitations.map((i) => i.email);

  test('with SMTP the link goes to the invitee only: one message in Mailpit, no link in the answer; following it joins', async () => {
    await mail.clear();
    const email = 'New.Person@accepted.example';
    const res = await invite(smtp, admin.smtp, org.smtp.id, email, 'viewer');
    assert.equal(res.statusCode, 201, res.body);
    const body = json<{ invitation: { email: string; role: string; expires_at: string }; delivered: string; invitation_url?: string }>(res);
    assert.equal(body.delivered, 'email');
    assert.equal(body.invitation_url, undefined);
    assert.doesNotMatch(res.body, /rci_|#\/invite\//, 'no token or link in the answer');
    assert.equal(res.headers['cache-control'], 'no-store');

    const messages = await mail.messages();
    assert.equal(messages.length, 1);
    assert.deepEqual(messages[0].To.map((t) => t.Address), [email]);
    assert.equal(messages[0].From.Address, 'console@cv.test');
    assert.equal(messages[0].Subject, `admin@smtp.example invites you to ${org.smtp.name}`);
    const message = await mail.message(messages[0].ID);
    const token = TOKEN_IN_LINK.exec(message.Text)?.[1];
    assert.ok(token, message.Text);
    assert.match(message.Text, new RegExp(`join the organisation ${org.smtp.name} as viewer`));
    assert.match(message.Text, new RegExp(`expires ${body.invitation.expires_at.slice(0, 16).replace('T', ' ')} UTC`));
    assert.ok(message.HTML.includes(`href="http://cv.test/console/#/invite/${token}"`), message.HTML);

    // the token from the e-mail is the invitation: inspect, accept with a new password, sign in
    const seen = await post(smtp, '/invitations/inspect', { token });
    assert.equal(seen.statusCode, 200, seen.body);
    assert.equal(json<{ invitation: { org: { name: string }; new_account: boolean } }>(seen).invitation.org.name, org.smtp.name);
    const accepted = await post(smtp, '/invitations/accept', { token, new_password: 'a passphrase of my own' });
    assert.equal(accepted.statusCode, 200, accepted.body);
    const me = await login(smtp.app, email, 'a passphrase of my own');
    const mine = json<{ memberships: Array<{ org: { name: string }; role: string }> }>(await smtp.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(me) }));
    assert.deepEqual(mine.memberships.map((m) => [m.org.name, m.role]), [[org.smtp.name, 'viewer']]);

    const entry = await smtp.db('audit_log').where({ action: 'invitation.create', org_id: org.smtp.id }).first<{ details: Record<string, unknown> }>('details');
    assert.equal(entry?.details.delivery, 'email');
  });

  test('without SMTP the link is answered once, and no mail is sent', async () => {
    await mail.clear();
    const res = await invite(plain, admin.plain, org.plain.id, 'someone@accepted.example');
    assert.equal(res.statusCode, 201, res.body);
    const body = json<{ delivered: string; invitation_url: string }>(res);
    assert.equal(body.delivered, 'link');
    assert.match(body.invitation_url, TOKEN_IN_LINK);
    assert.deepEqual(await mail.messages(), []);
  });

  test('a mail server that is down: 503 with Retry-After, nothing created, an earlier link still works; back up, inviting works', async () => {
    await mail.clear();
    const email = 'twice@accepted.example';
    assert.equal((await invite(smtp, admin.smtp, org.smtp.id, email)).statusCode, 201);
    const first = TOKEN_IN_LINK.exec((await mail.message((await mail.messages())[0].ID)).Text)?.[1];
    assert.ok(first);
    const auditBefore = await smtp.db('audit_log').where({ org_id: org.smtp.id }).count<Array<{ count: string }>>('* as count');

    await mail.stop();
    try {
      const res = await invite(smtp, admin.smtp, org.smtp.id, email, 'admin');
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(json(res).error_code, 'SERVICE_UNAVAILABLE');
      assert.match(json<{ message: string }>(res).message, /could not be sent.*no invitation was created/);
      assert.equal(res.headers['retry-after'], '60');
      assert.doesNotMatch(res.body, /rci_/);
      // nothing changed: the earlier invitation is still the pending one and its link works, no audit entry
      assert.deepEqual(await pending(smtp, admin.smtp, org.smtp.id), [email]);
      assert.equal((await post(smtp, '/invitations/inspect', { token: first })).statusCode, 200);
      const rows = await smtp.db('console_invitations').where({ org_id: org.smtp.id }).whereRaw('lower(email) = ?', [email]).select('role', 'revoked_at');
      assert.deepEqual(rows.map((r: { role: string; revoked_at: Date | null }) => [r.role, r.revoked_at]), [['member', null]]);
      assert.deepEqual(await smtp.db('audit_log').where({ org_id: org.smtp.id }).count<Array<{ count: string }>>('* as count'), auditBefore);
    } finally {
      await mail.start();
    }
    const again = await invite(smtp, admin.smtp, org.smtp.id, email, 'admin');
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(json<{ delivered: string }>(again).delivered, 'email');
    assert.equal((await post(smtp, '/invitations/inspect', { token: first })).statusCode, 404, 'the newer invitation replaced the earlier one');
  });

  test('nothing listening on the SMTP port: 503, no invitation', async () => {
    const closed = await buildTestApp({ SMTP_URL: `smtp://127.0.0.1:${await freePort()}`, SMTP_FROM: FROM });
    try {
      const o = await createOrg(closed.db, { name: `mail-closed-${Date.now()}` });
      await consoleUser(closed.db, 'admin@closed.example', [{ orgId: o.id, role: 'admin' }]);
      const who = await login(closed.app, 'admin@closed.example');
      const res = await invite(closed, who, o.id, 'nobody@accepted.example');
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(json(res).error_code, 'SERVICE_UNAVAILABLE');
      assert.deepEqual(await pending(closed, who, o.id), []);
    } finally {
      await closed.close();
    }
  });

  test('the mail server refuses the address: 400 saying so, no invitation', async () => {
    await mail.clear();
    const res = await invite(smtp, admin.smtp, org.smtp.id, 'someone@refused.example');
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res).error_code, 'VALIDATION_FAILED');
    assert.match(json<{ message: string }>(res).message, /refused the address someone@refused\.example/);
    assert.ok(!(await pending(smtp, admin.smtp, org.smtp.id)).includes('someone@refused.example'));
    assert.deepEqual(await mail.messages(), []);
  });
});
