/**
 * The audit log as the console API answers it: one query schema (filters) for an
 * organisation's log and an account's security log, as JSON (a page, newest first) or as
 * JSON lines (`format=jsonl`, `application/x-ndjson`), streamed a page at a time.
 */
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Knex } from 'knex';
import { ApiError } from '../api/errors.js';
import { ACTION_FILTER_RE, auditPages, listAudit, type AuditFilter, type AuditRow, type AuditScope } from '../store/audit.js';

export const JSONL_TYPE = 'application/x-ndjson';
const MAX_LIMIT = 1000;

export const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description: `1 to ${MAX_LIMIT} (JSON: default 100; JSON lines: default all)` })),
    action: Type.Optional(Type.String({ maxLength: 500, description: 'comma-separated actions; `key.*` matches every key action' })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: "the actor's e-mail (any case) or user id; `recog CLI` for the server CLI" })),
    since: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 date-time, inclusive' })),
    until: Type.Optional(Type.String({ maxLength: 40, description: 'ISO-8601 date-time, exclusive' })),
    before: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: 'only entries older than this id (paging)' })),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('jsonl')], { description: 'jsonl: every matching entry as JSON lines' })),
  },
  { additionalProperties: false },
);

export interface AuditRequest {
  filter: AuditFilter;
  limit: number | undefined;
  format: 'json' | 'jsonl';
}

function instant(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const d = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(d.getTime())) throw new ApiError('VALIDATION_FAILED', `${name} must be an ISO-8601 date-time such as 2026-11-01T00:00:00Z`);
  return d;
}

/** The query string as a filter; VALIDATION_FAILED for what cannot be read. */
export function auditFilterOf(q: Record<string, string | undefined>): AuditRequest {
  const filter: AuditFilter = {};
  if (q.action !== undefined) {
    const actions = q.action.split(',').map((a) => a.trim()).filter((a) => a !== '');
    const bad = actions.find((a) => !ACTION_FILTER_RE.test(a));
    if (bad !== undefined) throw new ApiError('VALIDATION_FAILED', `action: "${bad.slice(0, 60)}" is not an action such as key.create or a prefix such as key.*`);
    if (actions.length > 0) filter.actions = actions;
  }
  if (q.actor !== undefined) filter.actor = q.actor;
  filter.since = instant(q.since, 'since');
  filter.until = instant(q.until, 'until');
  if (q.before !== undefined) filter.beforeId = Number(q.before);
  let limit: number | undefined;
  if (q.limit !== undefined) {
    limit = Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new ApiError('VALIDATION_FAILED', `limit must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  return { filter, limit, format: q.format === 'jsonl' ? 'jsonl' : 'json' };
}

export function entryView(r: AuditRow) {
  return { ...r, created_at: new Date(r.created_at).toISOString() };
}

/** `{"entries":[…]}` (one page), or every matching entry as JSON lines, streamed. */
export async function sendAudit(db: Knex, reply: FastifyReply, scope: AuditScope, req: AuditRequest, fileName: string): Promise<unknown> {
  void reply.header('Cache-Control', 'no-store');
  if (req.format === 'json') return { entries: (await listAudit(db, scope, req.limit ?? 100, req.filter)).map(entryView) };
  const limit = req.limit ?? Number.POSITIVE_INFINITY;
  async function* lines(): AsyncGenerator<string> {
    let sent = 0;
    for await (const page of auditPages(db, scope, req.filter, Math.min(500, limit))) {
      for (const r of page) {
        if (sent++ >= limit) return;
        yield `${JSON.stringify(entryView(r))}\n`;
      }
    }
  }
  void reply
    .type(JSONL_TYPE)
    .header('Content-Disposition', `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl"`);
  return reply.send(Readable.from(lines()));
}
