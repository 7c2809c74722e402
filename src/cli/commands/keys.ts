/**
 * `recog keys …`: API keys. The plain key is printed once, at creation; afterwards only
 * its prefix is ever shown. Revoked is final.
 */
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { loadConfig } from '../../config.js';
import { audited, CLI_ACTOR, type AuditEntry } from '../../store/audit.js';
import { readMonthlyUsage } from '../../store/key-usage.js';
import { readCatalog } from '../../models/catalog-source.js';
import { keyClasses } from '../../recognition/key-classes.js';
import { createKey, getKey, listKeys, transitionKey, updateKey, type ApiKey, type KeyFields } from '../../store/keys.js';
import { resolveOrg } from '../../store/orgs.js';
import { emit, stdoutOutput, withDatabase } from './db.js';
import { parseWhole } from './orgs.js';

export interface KeyView {
  id: string;
  org_id: string;
  prefix: string;
  name: string;
  description: string | null;
  status: string;
  classes: string[];
  monthly_quota: number;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

function view(k: ApiKey): KeyView {
  return {
    id: k.id,
    org_id: k.org_id,
    prefix: k.prefix,
    name: k.name,
    description: k.description,
    status: k.status,
    classes: k.classes,
    monthly_quota: k.monthly_quota,
    rate_limit_per_minute: k.rate_limit_per_minute,
    expires_at: iso(k.expires_at),
    created_at: iso(k.created_at) as string,
    last_used_at: iso(k.last_used_at),
  };
}

/** Key changes made here are audited as the CLI, in the change's transaction. */
function keyEntry(k: ApiKey, action: AuditEntry['action'], details: Record<string, unknown>): AuditEntry {
  return { orgId: k.org_id, actor: CLI_ACTOR, action, target: { type: 'key', id: k.id, name: k.name }, details };
}

function line(k: KeyView): string {
  const classes = k.classes.length === 0 ? '(none)' : k.classes.join(',');
  return `${k.id}  ${k.prefix}…  ${k.status}  ${k.name}  classes=${classes}  quota=${k.monthly_quota}/month`;
}

export interface KeyDeps {
  db: Knex;
  /** Labels of the model catalog, to check --classes against. */
  labels(): Promise<string[]>;
  defaultMonthlyQuota: number;
}

export interface KeyFlags {
  name?: string;
  description?: string;
  classes?: string;
  quota?: string;
  rateLimit?: string;
  expires?: string;
}

/** '' → no classes; '*' → all; 'a,b' → those labels, which must exist in the catalog. */
export async function parseClasses(raw: string, labels: () => Promise<string[]>): Promise<string[]> {
  const checked = await keyClasses(raw.split(','), labels);
  if ('problem' in checked) throw new Error(`--classes: ${checked.problem}`);
  return checked.classes;
}

async function toFields(deps: KeyDeps, f: KeyFlags): Promise<KeyFields> {
  const out: KeyFields = {};
  if (f.name !== undefined) out.name = f.name;
  if (f.description !== undefined) out.description = f.description === '' ? null : f.description;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- a plain function taken from a parameter object
  if (f.classes !== undefined) out.classes = await parseClasses(f.classes, deps.labels);
  if (f.quota !== undefined) out.monthlyQuota = parseWhole('--quota', f.quota);
  if (f.rateLimit !== undefined) {
    const v = f.rateLimit.trim().toLowerCase();
    out.rateLimitPerMinute = v === 'default' || v === '' ? null : parseWhole('--rate-limit', f.rateLimit, 1);
  }
  if (f.expires !== undefined) {
    const v = f.expires.trim().toLowerCase();
    if (v === 'never' || v === '') out.expiresAt = null;
    else {
      const d = new Date(f.expires);
      if (!/^\d{4}-\d{2}-\d{2}/.test(f.expires.trim()) || Number.isNaN(d.getTime())) throw new Error(`--expires takes an ISO-8601 date such as 2027-01-31T00:00:00Z (got "${f.expires}")`);
      out.expiresAt = d;
    }
  }
  return out;
}

export async function keysCreate(deps: KeyDeps, opts: KeyFlags & { org: string }): Promise<KeyView & { key: string }> {
  if (!opts.name) throw new Error('--name is required');
  const org = await resolveOrg(deps.db, opts.org);
  const fields = await toFields(deps, opts);
  const name = opts.name;
  const { key, record } = await audited(
    deps.db,
    (trx) => createKey(trx, { ...fields, orgId: org.id, name, monthlyQuota: fields.monthlyQuota ?? deps.defaultMonthlyQuota }),
    ({ record: r }) => keyEntry(r, 'key.create', { prefix: r.prefix, classes: r.classes }),
  );
  return { key, ...view(record) };
}

export async function keysList(deps: Pick<KeyDeps, 'db'>, opts: { org?: string }): Promise<KeyView[]> {
  const orgId = opts.org === undefined ? undefined : (await resolveOrg(deps.db, opts.org)).id;
  return (await listKeys(deps.db, orgId)).map(view);
}

export async function keysShow(deps: Pick<KeyDeps, 'db'>, id: string): Promise<KeyView & { usage_this_month: number; organization: string }> {
  const k = await getKey(deps.db, id);
  const org = await resolveOrg(deps.db, k.org_id);
  return { ...view(k), organization: org.name, usage_this_month: await readMonthlyUsage(deps.db, k.id) };
}

export async function keysUpdate(deps: KeyDeps, id: string, opts: KeyFlags): Promise<KeyView> {
  const fields = await toFields(deps, opts);
  if (Object.keys(fields).length === 0) throw new Error('nothing to update: give --name, --description, --classes, --quota, --rate-limit or --expires');
  const changed = Object.fromEntries(Object.entries(opts).filter(([k, v]) => v !== undefined && k !== 'json'));
  return view(await audited(deps.db, (trx) => updateKey(trx, id, fields), (k) => keyEntry(k, 'key.update', { changed })));
}

export async function keysSetStatus(deps: Pick<KeyDeps, 'db'>, id: string, action: 'suspend' | 'resume' | 'revoke'): Promise<KeyView> {
  const { key } = await audited(
    deps.db,
    (trx) => transitionKey(trx, id, action),
    ({ from, key: k }) => (from === k.status ? null : keyEntry(k, `key.${action}`, { from, to: k.status })),
  );
  return view(key);
}

function withFieldOptions(cmd: Command): Command {
  return cmd
    .option('--description <d>', 'description')
    .option('--classes <list>', "comma-separated catalog labels, '*' for all, '' for none")
    .option('--quota <n>', 'monthly quota (requests per UTC month)')
    .option('--rate-limit <n>', "requests per minute over sync+batch ('default' for the service default)")
    .option('--expires <iso>', "expiry, ISO-8601 ('never' to clear)")
    .option('--json', 'print JSON');
}

export function register(program: Command): void {
  const keys = program.command('keys').description('API keys');
  const config = () => loadConfig();
  const deps = (db: Knex): KeyDeps => {
    const c = config();
    return { db, defaultMonthlyQuota: c.defaultMonthlyQuota, labels: async () => (await readCatalog(c)).classes.map((k) => k.label) };
  };
  const run = <T>(json: boolean | undefined, fn: (d: KeyDeps) => Promise<T>, text: (r: T) => string) =>
    withDatabase(config(), (db) => fn(deps(db))).then((r) => emit(stdoutOutput(Boolean(json)), r, () => text(r)));

  withFieldOptions(keys.command('create').description('Create a key; prints the plain key once').requiredOption('--org <org>', 'organisation name or id').requiredOption('--name <n>', 'name'))
    .action((o: KeyFlags & { org: string; json?: boolean }) =>
      run(o.json, (d) => keysCreate(d, o), (k) => `${line(k)}\nkey: ${k.key}\n(shown once: store it now)`),
    );
  keys.command('list')
    .description('List keys')
    .option('--org <org>', 'only this organisation (name or id)')
    .option('--json', 'print JSON')
    .action((o: { org?: string; json?: boolean }) => run(o.json, (d) => keysList(d, o), (l) => (l.length === 0 ? 'no keys' : l.map(line).join('\n'))));
  keys.command('show <id>')
    .description('Show a key, its usage this month and last use')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(o.json, (d) => keysShow(d, id), (k) => `${line(k)}\norganisation: ${k.organization}\nusage this month: ${k.usage_this_month}/${k.monthly_quota}\nlast used: ${k.last_used_at ?? 'never'}\nexpires: ${k.expires_at ?? 'never'}`),
    );
  withFieldOptions(keys.command('update <id>').description('Change a key (not its value)').option('--name <n>', 'name'))
    .action((id: string, o: KeyFlags & { json?: boolean }) => run(o.json, (d) => keysUpdate(d, id, o), line));
  for (const action of ['suspend', 'resume', 'revoke'] as const) {
    const what = { suspend: 'Suspend a key (403 until resumed)', resume: 'Resume a suspended key', revoke: 'Revoke a key for good (cannot be undone)' }[action];
    keys.command(`${action} <id>`)
      .description(what)
      .option('--json', 'print JSON')
      .action((id: string, o: { json?: boolean }) => run(o.json, (d) => keysSetStatus(d, id, action), line));
  }
}
