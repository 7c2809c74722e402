/** `recog orgs …`: organisations, their status and call balance. Every change is audited as the CLI, in its transaction. */
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { loadConfig } from '../../config.js';
import { audited, CLI_ACTOR } from '../../store/audit.js';
import { changeBalance, createOrg, listOrgs, resolveOrg, setOrgStatus, type Organization } from '../../store/orgs.js';
import { emit, stdoutOutput, withDatabase } from './db.js';

export interface OrgView {
  id: string;
  name: string;
  status: string;
  /** null = unlimited */
  balance: number | null;
  created_at: string;
}

function view(o: Organization): OrgView {
  return { id: o.id, name: o.name, status: o.status, balance: o.balance, created_at: new Date(o.created_at).toISOString() };
}

function line(o: OrgView): string {
  return `${o.id}  ${o.name}  ${o.status}  balance=${o.balance === null ? 'unlimited' : o.balance}`;
}

/** Parses a whole number option; throws a clear message otherwise. */
export function parseWhole(flag: string, raw: string, min = 0): number {
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min) throw new Error(`${flag} takes a whole number ≥ ${min} (got "${raw}")`);
  return n;
}

/** The organisation's row, locked for the change's transaction: the audit entry's "from" is what the change found. */
async function lockedOrg(trx: Knex.Transaction, ref: string): Promise<Organization> {
  const { id } = await resolveOrg(trx, ref);
  return (await trx('organizations').where({ id }).forUpdate().first()) as Organization;
}

export async function orgsCreate(db: Knex, name: string, opts: { balance?: string }): Promise<OrgView> {
  const balance = opts.balance === undefined ? null : parseWhole('--balance', opts.balance);
  return view(
    await audited(
      db,
      (trx) => createOrg(trx, { name, balance }),
      (o) => ({ orgId: o.id, actor: CLI_ACTOR, action: 'org.create', target: { type: 'org', id: o.id, name: o.name }, details: { balance: o.balance } }),
    ),
  );
}

export async function orgsList(db: Knex): Promise<OrgView[]> {
  return (await listOrgs(db)).map(view);
}

export async function orgsSetStatus(db: Knex, ref: string, status: 'active' | 'suspended'): Promise<OrgView> {
  const { after } = await audited(
    db,
    async (trx) => {
      const was = await lockedOrg(trx, ref);
      return { before: was, after: await setOrgStatus(trx, was.id, status) };
    },
    ({ before: b, after: o }) =>
      b.status === o.status
        ? null
        : { orgId: o.id, actor: CLI_ACTOR, action: status === 'suspended' ? 'org.suspend' : 'org.resume', target: { type: 'org', id: o.id, name: o.name }, details: { from: b.status, to: o.status } },
  );
  return view(after);
}

export async function orgsBalance(db: Knex, ref: string, opts: { set?: string; add?: string }): Promise<OrgView> {
  if ((opts.set === undefined) === (opts.add === undefined)) {
    if (opts.set === undefined) return view(await resolveOrg(db, ref));
    throw new Error('give one of --set N and --add N');
  }
  let change: { set: number | null } | { add: number };
  if (opts.set !== undefined) {
    const v = opts.set.trim().toLowerCase();
    change = { set: v === 'unlimited' || v === 'none' ? null : parseWhole('--set', opts.set) };
  } else change = { add: parseWhole('--add', opts.add as string, Number.MIN_SAFE_INTEGER) };
  const { after } = await audited(
    db,
    async (trx) => {
      const before = await lockedOrg(trx, ref);
      return { before, after: await changeBalance(trx, before.id, change) };
    },
    ({ before, after: o }) => ({ orgId: o.id, actor: CLI_ACTOR, action: 'org.balance', target: { type: 'org', id: o.id, name: o.name }, details: { from: before.balance, to: o.balance, ...change } }),
  );
  return view(after);
}

export function register(program: Command): void {
  const orgs = program.command('orgs').description('Organisations (owners of API keys)');
  const run = <T>(json: boolean | undefined, fn: (db: Knex) => Promise<T>, text: (r: T) => string) =>
    withDatabase(loadConfig(), fn).then((r) => emit(stdoutOutput(Boolean(json)), r, () => text(r)));

  orgs.command('create <name>')
    .description('Create an organisation')
    .option('--balance <n>', 'call balance (default: unlimited)')
    .option('--json', 'print JSON')
    .action((name: string, o: { balance?: string; json?: boolean }) => run(o.json, (db) => orgsCreate(db, name, o), line));
  orgs.command('list')
    .description('List organisations')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run(o.json, orgsList, (list) => (list.length === 0 ? 'no organisations' : list.map(line).join('\n'))));
  orgs.command('suspend <org>')
    .description('Suspend an organisation (name or id): its keys get 403')
    .option('--json', 'print JSON')
    .action((ref: string, o: { json?: boolean }) => run(o.json, (db) => orgsSetStatus(db, ref, 'suspended'), line));
  orgs.command('resume <org>')
    .description('Resume a suspended organisation')
    .option('--json', 'print JSON')
    .action((ref: string, o: { json?: boolean }) => run(o.json, (db) => orgsSetStatus(db, ref, 'active'), line));
  orgs.command('balance <org>')
    .description('Show or change the call balance: --set N (or unlimited) | --add N (may be negative)')
    .option('--set <n>', 'new balance, or "unlimited"')
    .option('--add <n>', 'amount to add (negative to take away)')
    .option('--json', 'print JSON')
    .action((ref: string, o: { set?: string; add?: string; json?: boolean }) => run(o.json, (db) => orgsBalance(db, ref, o), line));
}
