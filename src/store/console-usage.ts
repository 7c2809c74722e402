/**
 * Read models for the console: requests per day (DONE/ERROR from `requests`, refusals
 * from key_refusals_daily), quota use this month, the latest requests of a key with
 * their feedback, and feedback counts per label and per day. All days are UTC.
 */
import type { Knex } from 'knex';
import type { Detection } from '../recognition/detection.js';

export interface DayUsage {
  date: string;
  done: number;
  error: number;
  refused: number;
}

/** Counts a call the limits refused (rate limit, monthly quota, balance) for the key's usage chart. */
export async function recordRefusal(db: Knex, keyId: string): Promise<void> {
  await db.raw(
    `insert into key_refusals_daily as r (key_id, day, refused) values (?, (now() at time zone 'utc')::date, 1)
     on conflict (key_id, day) do update set refused = r.refused + 1`,
    [keyId],
  );
}

function dayList(days: number, now = new Date()): string[] {
  const out: string[] = [];
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let i = days - 1; i >= 0; i--) out.push(new Date(today - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

/** One entry per day of the last `days` (today included), zeros where nothing happened. */
export async function usageByDay(db: Knex, orgId: string, days: number, keyId?: string): Promise<DayUsage[]> {
  const list = dayList(days);
  const since = `${list[0]}T00:00:00Z`;
  const req = db('requests')
    .where('org_id', orgId)
    .where('created_at', '>=', since)
    .whereIn('status', ['DONE', 'ERROR'])
    .groupByRaw(`1, 2`)
    .select(db.raw(`to_char(created_at at time zone 'utc', 'YYYY-MM-DD') as day`), 'status', db.raw('count(*)::int as n'));
  if (keyId) req.where('key_id', keyId);
  const ref = db('key_refusals_daily as r')
    .join('api_keys as k', 'k.id', 'r.key_id')
    .where('k.org_id', orgId)
    .where('r.day', '>=', list[0])
    .groupBy('r.day')
    .select(db.raw(`to_char(r.day, 'YYYY-MM-DD') as day`), db.raw('sum(r.refused)::int as n'));
  if (keyId) ref.where('r.key_id', keyId);
  const [reqRows, refRows] = (await Promise.all([req, ref])) as [Array<{ day: string; status: string; n: number }>, Array<{ day: string; n: number }>];
  const byDay = new Map(list.map((d) => [d, { date: d, done: 0, error: 0, refused: 0 }]));
  for (const r of reqRows) {
    const e = byDay.get(r.day);
    if (e) e[r.status === 'DONE' ? 'done' : 'error'] += r.n;
  }
  for (const r of refRows) {
    const e = byDay.get(r.day);
    if (e) e.refused += r.n;
  }
  return [...byDay.values()];
}

/** Units used this UTC month per key of the organisation. */
export async function monthlyUsageByKey(db: Knex, orgId: string, now = new Date()): Promise<Map<string, number>> {
  const rows = await db('key_usage as u')
    .join('api_keys as k', 'k.id', 'u.key_id')
    .where({ 'k.org_id': orgId, 'u.month': now.toISOString().slice(0, 7) })
    .select<Array<{ key_id: string; used: number }>>('u.key_id', 'u.used');
  return new Map(rows.map((r) => [r.key_id, Number(r.used)]));
}

export interface ConsoleRequest {
  id: string;
  external_id: string | null;
  kind: string;
  status: string;
  created_at: Date;
  processing_time_ms: number | null;
  image_stored: boolean;
  results: Detection[];
  error: string | null;
  response_code: number | null;
  feedback: number | null;
}

export async function latestRequests(db: Knex, keyId: string, limit: number): Promise<ConsoleRequest[]> {
  return db('requests as r')
    .leftJoin('feedback as f', 'f.request_id', 'r.id')
    .where('r.key_id', keyId)
    .orderBy('r.created_at', 'desc')
    .limit(limit)
    .select<ConsoleRequest[]>(
      'r.id', 'r.external_id', 'r.kind', 'r.status', 'r.created_at', 'r.processing_time_ms', 'r.image_stored',
      'r.results', 'r.error', 'r.response_code', 'f.rating as feedback',
    );
}

export interface FeedbackCounts {
  by_label: Array<{ label: string; bad: number; neutral: number; good: number }>;
  by_day: Array<{ date: string; bad: number; neutral: number; good: number }>;
}

const RATING_COLUMNS = `count(*) filter (where f.rating = -1)::int as bad,
  count(*) filter (where f.rating = 0)::int as neutral,
  count(*) filter (where f.rating = 1)::int as good`;

/** Current ratings of the organisation's requests rated in the last `days`; a request counts once per label it found. */
export async function feedbackCounts(db: Knex, orgId: string, days: number): Promise<FeedbackCounts> {
  const list = dayList(days);
  const since = `${list[0]}T00:00:00Z`;
  const byLabel = await db.raw<{ rows: FeedbackCounts['by_label'] }>(
    `select l.label, ${RATING_COLUMNS}
     from feedback f join requests r on r.id = f.request_id
     cross join lateral (select distinct d->>'label' as label from jsonb_array_elements(r.results) d) l
     where r.org_id = ? and f.updated_at >= ?
     group by l.label order by l.label`,
    [orgId, since],
  );
  const byDay = await db.raw<{ rows: Array<{ date: string; bad: number; neutral: number; good: number }> }>(
    `select to_char(f.updated_at at time zone 'utc', 'YYYY-MM-DD') as date, ${RATING_COLUMNS}
     from feedback f join requests r on r.id = f.request_id
     where r.org_id = ? and f.updated_at >= ?
     group by 1`,
    [orgId, since],
  );
  const days_ = new Map(list.map((d) => [d, { date: d, bad: 0, neutral: 0, good: 0 }]));
  for (const r of byDay.rows) days_.set(r.date, r);
  return { by_label: byLabel.rows, by_day: [...days_.values()] };
}
