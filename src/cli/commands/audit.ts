/**
 * `recog audit list`: the audit log for operators, all of it or one organisation's or one
 * account's, with the console's filters. The only place that shows entries with neither
 * (a failed sign-in for an e-mail without an account). Reads only.
 */
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { loadConfig } from '../../config.js';
import { ACTION_FILTER_RE, auditPages, type AuditFilter, type AuditRow, type AuditScope } from '../../store/audit.js';
import { resolveOrg } from '../../store/orgs.js';
import { findUserByEmail } from '../../store/users.js';
import { withDatabase } from './db.js';
import { parseWhole } from './orgs.js';

export interface AuditListOptions {
  org?: string;
  /** the account's e-mail: its security log */
  user?: string;
  action?: string;
  actor?: string;
  since?: string;
  until?: string;
  limit?: string;
}

function instant(flag: string, raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const d = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw.trim()) || Number.isNaN(d.getTime())) throw new Error(`${flag} takes an ISO-8601 date-time such as 2026-11-01T00:00:00Z (got "${raw}")`);
  return d;
}

/** Matching entries, newest first (at most --limit, default 100). */
export async function auditList(db: Knex, o: AuditListOptions): Promise<AuditRow[]> {
  if (o.org !== undefined && o.user !== undefined) throw new Error('give --org or --user, not both');
  let scope: AuditScope = { all: true };
  if (o.org !== undefined) scope = { orgId: (await resolveOrg(db, o.org)).id };
  if (o.user !== undefined) {
    const u = await findUserByEmail(db, o.user);
    if (!u) throw new Error(`no user with e-mail "${o.user}"`);
    scope = { userId: u.id };
  }
  const filter: AuditFilter = { actor: o.actor, since: instant('--since', o.since), until: instant('--until', o.until) };
  if (o.action !== undefined) {
    filter.actions = o.action.split(',').map((a) => a.trim()).filter((a) => a !== '');
    const bad = filter.actions.find((a) => !ACTION_FILTER_RE.test(a));
    if (bad !== undefined) throw new Error(`--action: "${bad}" is not an action such as key.create or a prefix such as key.*`);
  }
  const limit = o.limit === undefined ? 100 : parseWhole('--limit', o.limit, 1);
  const out: AuditRow[] = [];
  for await (const page of auditPages(db, scope, filter, Math.min(limit, 500))) {
    out.push(...page.slice(0, limit - out.length));
    if (out.length >= limit) break;
  }
  return out;
}

function line(r: AuditRow): string {
  const target = `${r.target.type} ${r.target.name ?? r.target.id}`;
  return `${new Date(r.created_at).toISOString()}  ${r.actor.email}  ${r.action}  ${target}  ${JSON.stringify(r.details)}${r.ip ? `  from ${r.ip}` : ''}`;
}

export function register(program: Command): void {
  const audit = program.command('audit').description('The audit log (security events and changes)');
  audit
    .command('list')
    .description('Entries, newest first: all, or one organisation\'s (--org), or one account\'s security log (--user)')
    .option('--org <org>', 'organisation name or id')
    .option('--user <email>', "an account's security log")
    .option('--action <list>', 'comma-separated actions; key.* for a prefix')
    .option('--actor <who>', "actor's e-mail or user id ('recog CLI' for this CLI)")
    .option('--since <iso>', 'from (inclusive)')
    .option('--until <iso>', 'until (exclusive)')
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--jsonl', 'JSON lines, one entry per line')
    .action(async (o: AuditListOptions & { jsonl?: boolean }) => {
      const rows = await withDatabase(loadConfig(), (db) => auditList(db, o));
      for (const r of rows) process.stdout.write(`${o.jsonl ? JSON.stringify({ ...r, created_at: new Date(r.created_at).toISOString() }) : line(r)}\n`);
    });
}
