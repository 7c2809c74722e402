/** login, logout, whoami, keys and usage: the console API with the user's login. */
import type { Command } from 'commander';
import type { ApiKey, KeyChanges, NewKey } from '@recognition-service/client';
import type { Context } from '../context.js';
import { printJson, table, UsageError } from '../output.js';
import { ask, askHidden, readStdin } from '../prompt.js';

function keyRows(keys: ApiKey[]): string[][] {
  return keys.map((k) => [
    k.id,
    k.name,
    `${k.prefix}…`,
    k.status,
    k.classes.join(','),
    `${k.used_this_month}/${k.monthly_quota ?? '∞'}`,
    k.last_used_at ?? 'never',
    k.expires_at ?? '-',
  ]);
}

const KEY_HEADER = ['ID', 'NAME', 'PREFIX', 'STATUS', 'CLASSES', 'USED/QUOTA', 'LAST USED', 'EXPIRES'];

function intOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number`);
  return Number(value);
}

function expiryOption(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'never') return null;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new UsageError('--expires takes a date (2027-01-31 or an ISO time) or "never"');
  return new Date(t).toISOString();
}

interface KeyFlags {
  name?: string;
  description?: string;
  classes?: string;
  quota?: string;
  expires?: string;
  rateLimit?: string;
}

function keyChanges(f: KeyFlags): KeyChanges {
  const changes: KeyChanges = {};
  if (f.name !== undefined) changes.name = f.name;
  if (f.description !== undefined) changes.description = f.description;
  if (f.classes !== undefined) changes.classes = f.classes.split(',').map((s) => s.trim()).filter(Boolean);
  const quota = intOption(f.quota, '--quota');
  if (quota !== undefined) changes.monthly_quota = quota;
  const expires = expiryOption(f.expires);
  if (expires !== undefined) changes.expires_at = expires;
  const rate = intOption(f.rateLimit, '--rate-limit');
  if (rate !== undefined) changes.rate_limit_per_minute = rate;
  return changes;
}

export function registerAccount(program: Command, ctx: () => Context): void {
  program
    .command('login')
    .description('log in with your e-mail and password; tokens are kept (0600) and refresh by themselves')
    .option('--email <email>', 'your e-mail (asked when missing)')
    .option('--password-stdin', 'read the password from stdin (for scripts); never pass it as an argument')
    .action(async (opts: { email?: string; passwordStdin?: boolean }) => {
      const c = ctx();
      const email = opts.email ?? (await ask('E-mail: '));
      const password = opts.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : await askHidden('Password: ');
      if (!email || !password) throw new UsageError('an e-mail and a password are needed');
      const client = await c.console();
      // An account with two-factor authentication: asked for the code after the password.
      const user = await client.login(email, password, { mfaCode: () => ask('Authentication code (or a recovery code): ') });
      if (c.json) printJson({ logged_in: true, user, base_url: client.baseUrl, profile: c.settings.profile });
      else process.stdout.write(`Logged in to ${client.baseUrl} as ${user?.email ?? email} (profile ${c.settings.profile}).\n`);
    });

  program
    .command('logout')
    .description('end the session on the server and forget its tokens here')
    .action(async () => {
      await (await ctx().console()).logout();
      process.stdout.write('Logged out.\n');
    });

  program
    .command('whoami')
    .description('who you are logged in as, and your organisations')
    .action(async () => {
      const c = ctx();
      const client = await c.console();
      const me = await client.me();
      if (c.json) return printJson(me);
      process.stdout.write(`${me.user.email} on ${client.baseUrl} (profile ${c.settings.profile})\n`);
      process.stdout.write(`${table(me.memberships.map((m) => [m.org.name, m.role]), ['ORGANISATION', 'ROLE'])}\n`);
    });

  const keys = program.command('keys').description('API keys of your organisation (needs a login)');
  const withOrg = (cmd: Command) => cmd.option('--org <name>', 'organisation (default: the profile\'s, or your only one)');
  const withKeyFlags = (cmd: Command) =>
    cmd
      .option('--description <text>', 'description')
      .option('--classes <list>', 'comma-separated labels the key may see, or *')
      .option('--quota <n>', 'monthly quota')
      .option('--expires <date>', 'expiry date, or "never"')
      .option('--rate-limit <n>', 'requests per minute');

  withOrg(keys.command('list').description('list keys')).action(async (opts: { org?: string }) => {
    const c = ctx();
    const client = await c.console();
    const list = await client.listKeys(await c.org(opts.org, client));
    if (c.json) printJson(list);
    else process.stdout.write(`${table(keyRows(list), KEY_HEADER)}\n`);
  });

  withKeyFlags(withOrg(keys.command('create').description('create a key; the key is printed this once').requiredOption('--name <name>', 'name'))).action(
    async (opts: KeyFlags & { org?: string }) => {
      const c = ctx();
      const client = await c.console();
      const body = { classes: ['*'], ...keyChanges(opts) } as NewKey;
      const { key, secret } = await client.createKey(await c.org(opts.org, client), body);
      if (c.json) return printJson({ key, secret });
      process.stdout.write(`${table(keyRows([key]), KEY_HEADER)}\n\n${secret}\n\n`);
      process.stderr.write('This is the only time the key is shown. Store it now (e.g. recog-client config set api_key -).\n');
    },
  );

  withKeyFlags(withOrg(keys.command('update').description('change a key').argument('<key-id>', 'the key').option('--name <name>', 'name'))).action(
    async (id: string, opts: KeyFlags & { org?: string }) => {
      const c = ctx();
      const changes = keyChanges(opts);
      if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give at least one of --name, --description, --classes, --quota, --expires, --rate-limit');
      const client = await c.console();
      const key = await client.updateKey(await c.org(opts.org, client), id, changes);
      if (c.json) printJson(key);
      else process.stdout.write(`${table(keyRows([key]), KEY_HEADER)}\n`);
    },
  );

  for (const action of ['suspend', 'resume', 'revoke'] as const) {
    const cmd = withOrg(keys.command(action).argument('<key-id>', 'the key'));
    cmd.description(action === 'revoke' ? 'revoke a key for good (asks you to type its name, or --yes)' : `${action} a key`);
    if (action === 'revoke') cmd.option('-y, --yes', 'do not ask for confirmation');
    cmd.action(async (id: string, opts: { org?: string; yes?: boolean }) => {
      const c = ctx();
      const client = await c.console();
      const org = await c.org(opts.org, client);
      if (action === 'revoke' && !opts.yes) {
        const key = (await client.listKeys(org)).find((k) => k.id === id);
        if (!key) throw new UsageError(`no key ${id} in ${org}`);
        const typed = await ask(`Revoking cannot be undone. Type the key's name (${key.name}) to revoke it: `);
        if (typed !== key.name) throw new UsageError('the name did not match; nothing was revoked');
      }
      const key = await client.setKeyStatus(org, id, action);
      if (c.json) printJson(key);
      else process.stdout.write(`${key.name}: ${key.status}\n`);
    });
  }

  withOrg(program.command('usage').description('requests per day over the last days (DONE / ERROR / refused)'))
    .option('--key <key-id>', 'one key only')
    .option('--days <n>', 'how many days', '30')
    .action(async (opts: { org?: string; key?: string; days: string }) => {
      const c = ctx();
      const client = await c.console();
      const usage = await client.usage(await c.org(opts.org, client), { days: intOption(opts.days, '--days'), keyId: opts.key });
      if (c.json) return printJson(usage);
      const rows = usage.days.map((d) => [d.date, String(d.done), String(d.error), String(d.refused)]);
      process.stdout.write(`${table(rows, ['DATE', 'DONE', 'ERROR', 'REFUSED'])}\n`);
    });
}
