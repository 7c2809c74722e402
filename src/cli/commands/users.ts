/**
 * `recog users …`: console users, bootstrapped without the web. The password comes from
 * a prompt without echo, or from stdin (`--password-stdin`), never from argv, where it
 * would show in `ps` and shell history. `invite` hands out a one-time link instead, so
 * the operator never knows the person's password.
 */
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadConfig } from '../../config.js';
import { audited, CLI_ACTOR, type AuditEntry } from '../../store/audit.js';
import { removeTotp } from '../../store/mfa.js';
import { hashPassword, passwordProblem } from '../../console/passwords.js';
import { resolveOrg } from '../../store/orgs.js';
import { createInvitation } from '../../store/invitations.js';
import { changePassword } from '../../store/sessions.js';
import { addMember, createUser, findUserByEmail, membershipsOf, ROLES, type Role } from '../../store/users.js';
import { emit, stdoutOutput, withDatabase } from './db.js';

export interface UserCreated {
  user: { id: string; email: string };
  org: { id: string; name: string };
  role: Role;
  created: boolean;
}

/**
 * Creates the user (or finds the existing one) and makes them a member of the organisation;
 * audited as the CLI, in one transaction. A new account's password is temporary: it must be
 * changed at the first sign-in.
 */
export async function usersCreate(db: Knex, o: { email: string; org: string; role: string }, password: () => Promise<string>): Promise<UserCreated> {
  if (!(ROLES as readonly string[]).includes(o.role)) throw new Error(`--role must be one of ${ROLES.join(', ')} (got "${o.role}")`);
  const org = await resolveOrg(db, o.org);
  const found = await findUserByEmail(db, o.email);
  const created = found === null;
  let passwordHash: string | null = null;
  if (!found) {
    const pw = await password();
    const problem = passwordProblem(pw, o.email);
    if (problem) throw new Error(problem);
    passwordHash = await hashPassword(pw);
  }
  const role = o.role as Role;
  const user = await audited(
    db,
    async (trx) => {
      const u = found ?? (await createUser(trx, { email: o.email, passwordHash: passwordHash as string, passwordMustChange: true }));
      const existing = (await membershipsOf(trx, u.id)).find((m) => m.org.id === org.id);
      if (existing) throw new Error(`${u.email} is already ${existing.role} of "${org.name}"`);
      await addMember(trx, org.id, u.id, role);
      return { id: u.id, email: u.email };
    },
    (u) => [
      ...(created ? [{ userId: u.id, actor: CLI_ACTOR, action: 'user.create', target: { type: 'user', id: u.id, name: u.email } } satisfies AuditEntry] : []),
      { orgId: org.id, actor: CLI_ACTOR, action: 'member.add', target: { type: 'member', id: u.id, name: u.email }, details: { role, new_account: created } } satisfies AuditEntry,
    ],
  );
  return { user, org: { id: org.id, name: org.name }, role, created };
}

/** An operator sets a new password (a forgotten one); every session of the user ends, and it must be changed at the next sign-in. */
export async function usersSetPassword(db: Knex, email: string, password: () => Promise<string>): Promise<{ user: { id: string; email: string } }> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new Error(`no user with e-mail "${email}"`);
  const pw = await password();
  const problem = passwordProblem(pw, user.email);
  if (problem) throw new Error(problem);
  // One transaction: the new password, every session revoked, the audit entry; older sessions are refused from now on.
  const hash = await hashPassword(pw);
  await audited(
    db,
    (trx) => changePassword(trx, user.id, hash, 'password_reset'),
    () => ({ userId: user.id, actor: CLI_ACTOR, action: 'user.password_reset', target: { type: 'user', id: user.id, name: user.email }, details: { sessions_ended: true } }),
  );
  return { user: { id: user.id, email: user.email } };
}

/**
 * An operator removes a user's second factor (a lost device and no recovery code left): TOTP
 * and recovery codes go, the user signs in with the password alone and can set it up again.
 * Audited as the CLI, with the change.
 */
export async function usersResetMfa(db: Knex, email: string): Promise<{ user: { id: string; email: string }; removed: boolean }> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new Error(`no user with e-mail "${email}"`);
  const removed = await audited(
    db,
    (trx) => removeTotp(trx, user.id),
    (done) => (done ? { userId: user.id, actor: CLI_ACTOR, action: 'user.mfa_disable', target: { type: 'user', id: user.id, name: user.email }, details: { method: 'operator_reset' } } : null),
  );
  return { user: { id: user.id, email: user.email }, removed };
}

export interface UserInvited {
  invitation: { id: string; email: string; role: Role; expires_at: string };
  org: { id: string; name: string };
  invitation_url: string;
}

/** A one-time invitation link (the invitee sets their own password or accepts as their account); audited as done by the CLI. */
export async function usersInvite(db: Knex, o: { email: string; org: string; role: string }, publicBaseUrl: string): Promise<UserInvited> {
  if (!(ROLES as readonly string[]).includes(o.role)) throw new Error(`--role must be one of ${ROLES.join(', ')} (got "${o.role}")`);
  const org = await resolveOrg(db, o.org);
  const { invitation, token } = await createInvitation(db, { orgId: org.id, email: o.email, role: o.role as Role, inviter: CLI_ACTOR });
  return {
    invitation: { id: invitation.id, email: invitation.email, role: invitation.role, expires_at: invitation.expires_at.toISOString() },
    org: { id: org.id, name: org.name },
    invitation_url: `${publicBaseUrl}/console/#/invite/${token}`,
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Reads a line from the terminal without echoing it. */
function prompt(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}

async function askPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) return readStdin();
  const first = await prompt('Password (at least 12 characters): ');
  const again = await prompt('Repeat it: ');
  if (first !== again) throw new Error('the two passwords differ');
  return first;
}

export function register(program: Command): void {
  const users = program.command('users').description('Console users and their roles in organisations');
  users
    .command('create')
    .description('Create a console user (or add an existing one) as a member of an organisation; the password is prompted for or read from stdin')
    .requiredOption('--email <email>', 'e-mail address (unique, case-insensitive)')
    .requiredOption('--org <org>', 'organisation name or id')
    .option('--role <role>', `${ROLES.join(' | ')}`, 'member')
    .option('--password-stdin', 'read the password from stdin (also when stdin is not a terminal)')
    .option('--json', 'print JSON')
    .action((o: { email: string; org: string; role: string; passwordStdin?: boolean; json?: boolean }) =>
      withDatabase(loadConfig(), (db) => usersCreate(db, o, () => askPassword(Boolean(o.passwordStdin)))).then((r) =>
        emit(stdoutOutput(Boolean(o.json)), r, () => `${r.created ? 'created' : 'found'} ${r.user.email} (${r.user.id}); ${r.role} of ${r.org.name}`),
      ),
    );
  users
    .command('invite')
    .description('Invite a person to an organisation: prints a one-time link (7 days) where they set their own password, or accept as their existing account')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--org <org>', 'organisation name or id')
    .option('--role <role>', `${ROLES.join(' | ')}`, 'member')
    .option('--json', 'print JSON')
    .action((o: { email: string; org: string; role: string; json?: boolean }) => {
      const config = loadConfig();
      return withDatabase(config, (db) => usersInvite(db, o, config.publicBaseUrl)).then((r) =>
        emit(stdoutOutput(Boolean(o.json)), r, () => `invited ${r.invitation.email} as ${r.invitation.role} of ${r.org.name}; pass this link on (shown once, valid until ${r.invitation.expires_at}):\n${r.invitation_url}`),
      );
    });
  users
    .command('set-password')
    .description("Set a user's password (prompted for or read from stdin); signs the user out everywhere")
    .requiredOption('--email <email>', 'e-mail address')
    .option('--password-stdin', 'read the password from stdin')
    .option('--json', 'print JSON')
    .action((o: { email: string; passwordStdin?: boolean; json?: boolean }) =>
      withDatabase(loadConfig(), (db) => usersSetPassword(db, o.email, () => askPassword(Boolean(o.passwordStdin)))).then((r) =>
        emit(stdoutOutput(Boolean(o.json)), r, () => `password of ${r.user.email} set; their sessions are signed out`),
      ),
    );
  users
    .command('reset-mfa')
    .description("Remove a user's two-factor authentication (lost device, no recovery code left); they sign in with the password and can set it up again")
    .requiredOption('--email <email>', 'e-mail address')
    .option('--json', 'print JSON')
    .action((o: { email: string; json?: boolean }) =>
      withDatabase(loadConfig(), (db) => usersResetMfa(db, o.email)).then((r) =>
        emit(stdoutOutput(Boolean(o.json)), r, () => (r.removed ? `two-factor authentication of ${r.user.email} removed` : `${r.user.email} had no two-factor authentication`)),
      ),
    );
}
