/** PostgreSQL implementation of the recognition RequestRepository. */
import type { Knex } from 'knex';
import type { Detection } from '../recognition/detection.js';
import type { ChargeOrder, ChargeResult, RequestFailure, RequestRecord, RequestRepository } from '../recognition/ports.js';
import { withDbRetry } from './db-faults.js';

interface Row {
  id: string;
  key_id: string;
  org_id: string;
  kind: 'sync' | 'batch';
  external_id: string | null;
  status: RequestRecord['status'];
  source: RequestRecord['source'];
  source_url: string | null;
  image_fingerprint: string;
  image_stored: boolean;
  results: Detection[];
  error: string | null;
  response_code: number | null;
  model_name: string | null;
  model_version: string | null;
  processing_time_ms: number | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const UNFINISHED = ['QUEUED', 'PROCESSING'];

/** The answer of the SQL function recognition_admit (migration 0500_admission), in its own words. */
type AdmitJson =
  | { outcome: 'admitted'; requests: Array<Record<string, unknown>> }
  | { outcome: 'existing'; request: Record<string, unknown> | null }
  | { outcome: 'quota'; used: number }
  | { outcome: 'balance' };

function toRecord(r: Row): RequestRecord {
  return {
    id: r.id,
    keyId: r.key_id,
    orgId: r.org_id,
    kind: r.kind,
    externalId: r.external_id,
    status: r.status,
    source: r.source,
    sourceUrl: r.source_url,
    imageFingerprint: r.image_fingerprint,
    imageStored: r.image_stored,
    results: r.results ?? [],
    error: r.error,
    responseCode: r.response_code,
    model: r.model_name === null ? null : { name: r.model_name, version: r.model_version ?? '' },
    processingTimeMs: r.processing_time_ms,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** A row as `to_jsonb` gives it (from recognition_admit): timestamps are ISO strings. */
function fromJson(j: Record<string, unknown>): RequestRecord {
  const at = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return toRecord({ ...(j as unknown as Row), created_at: at(j.created_at)!, started_at: at(j.started_at), finished_at: at(j.finished_at) });
}

/**
 * Ends the requests `where` selects ERROR and, with `refund`, gives back the charge of those
 * charged and not yet refunded: quota to key_usage (the month it was counted in), balance to
 * the organisation. One statement, so ending and refunding cannot come apart, and the
 * `refunded_at IS NULL` guard under the row lock makes the refund happen once whichever
 * replica or sweep ends the request. Locks key_usage before organizations, as charging does.
 */
export async function endRequests(
  db: Knex,
  where: { sql: string; bindings: Knex.Value[] },
  end: RequestFailure & { refund: boolean },
): Promise<{ ended: number; refunded: number }> {
  const { rows } = await db.raw<{ rows: Array<{ ended: number; refunded: number }> }>(
    `WITH target AS (
       SELECT id, (refunded_at IS NULL AND charge_month IS NOT NULL AND ?::boolean) AS refund_now
       FROM requests WHERE ${where.sql} FOR UPDATE
     ), ended AS (
       UPDATE requests r SET status = 'ERROR', error = ?, response_code = ?,
         processing_time_ms = COALESCE(?::int, r.processing_time_ms), finished_at = now(),
         image_stored = COALESCE(?::boolean, r.image_stored),
         refunded_at = CASE WHEN t.refund_now THEN now() ELSE r.refunded_at END
       FROM target t WHERE r.id = t.id
       RETURNING r.key_id, r.org_id, r.charge_month, t.refund_now
     ), quota AS (
       UPDATE key_usage u SET used = GREATEST(u.used - s.n, 0), updated_at = now()
       FROM (SELECT key_id, charge_month, count(*)::int AS n FROM ended WHERE refund_now GROUP BY key_id, charge_month) s
       WHERE u.key_id = s.key_id AND u.month = s.charge_month
     ), balance AS (
       UPDATE organizations o SET balance = o.balance + s.n
       FROM (SELECT org_id, count(*)::int AS n FROM ended WHERE refund_now GROUP BY org_id) s
       WHERE o.id = s.org_id AND o.balance IS NOT NULL
     )
     SELECT count(*)::int AS ended, (count(*) FILTER (WHERE refund_now))::int AS refunded FROM ended`,
    [
      end.refund,
      ...where.bindings,
      end.error,
      end.responseCode,
      end.processingTimeMs === undefined ? null : Math.round(end.processingTimeMs),
      end.imageStored ?? null,
    ],
  );
  return rows[0] ?? { ended: 0, refunded: 0 };
}

export class PgRequestRepository implements RequestRepository {
  constructor(
    private readonly db: Knex,
    /** Tags rows with the process that runs them (see closeInstanceRequests). */
    private readonly instanceId: string,
  ) {}

  // Transient database faults are retried where a retry cannot do harm (see db-faults.ts):
  // reads and idempotent writes always, other writes only when the statement did not apply.

  async charge(a: ChargeOrder): Promise<ChargeResult> {
    const requests = a.requests.map((n) => ({
      id: n.id,
      kind: n.kind,
      external_id: n.externalId,
      source: n.source,
      source_url: n.sourceUrl,
      image_fingerprint: n.imageFingerprint,
    }));
    // Safe to repeat whatever happened to the first try: the ids make a repeat find its rows.
    const { rows } = await withDbRetry(
      () =>
        this.db.raw<{ rows: Array<{ r: AdmitJson }> }>(`SELECT recognition_admit(?, ?, ?, ?, ?, ?, ?, ?::jsonb) AS r`, [
          a.keyId,
          a.orgId,
          a.month,
          a.quota,
          a.status,
          this.instanceId,
          a.idempotent,
          JSON.stringify(requests),
        ]),
      { idempotent: true },
    );
    const r = rows[0].r;
    switch (r.outcome) {
      case 'admitted': {
        const byId = new Map(r.requests.map((j) => [j.id as string, fromJson(j)]));
        return { outcome: 'charged', records: a.requests.map((n) => byId.get(n.id)!) };
      }
      case 'existing':
        return { outcome: 'existing', record: r.request === null ? null : fromJson(r.request) };
      case 'quota':
        return { outcome: 'quota', used: Number(r.used) };
      case 'balance':
        return { outcome: 'balance' };
    }
  }

  async markProcessing(id: string): Promise<boolean> {
    const n = await withDbRetry(() => this.db('requests').where({ id, status: 'QUEUED' }).update({ status: 'PROCESSING', started_at: this.db.fn.now() }), { idempotent: false });
    return n === 1;
  }

  async finishDone(id: string, d: { results: Detection[]; model: { name: string; version: string }; processingTimeMs: number }): Promise<boolean> {
    const n = await this.db('requests')
      .where({ id })
      .whereIn('status', UNFINISHED)
      .update({
        status: 'DONE',
        results: JSON.stringify(d.results),
        model_name: d.model.name,
        model_version: d.model.version,
        processing_time_ms: Math.round(d.processingTimeMs),
        response_code: 200,
        error: null,
        finished_at: this.db.fn.now(),
      });
    return n === 1;
  }

  async finishError(id: string, f: RequestFailure): Promise<boolean> {
    // Conditional on the request being unfinished, so repeating it after an unknown outcome is harmless.
    const { ended } = await withDbRetry(
      () => endRequests(this.db, { sql: `id = ? AND status IN ('QUEUED', 'PROCESSING')`, bindings: [id] }, { ...f, refund: f.refund ?? false }),
      { idempotent: true },
    );
    return ended === 1;
  }

  async failUndelivered(id: string, error: string, responseCode: number): Promise<boolean> {
    const { ended } = await withDbRetry(
      () => endRequests(this.db, { sql: `id = ? AND status <> 'ERROR'`, bindings: [id] }, { error, responseCode, refund: true }),
      { idempotent: true },
    );
    return ended === 1;
  }

  async discard(id: string): Promise<boolean> {
    // The row and its charge go together; a repeat finds nothing to delete and gives nothing back.
    const { rows } = await withDbRetry(
      () =>
        this.db.raw<{ rows: Array<{ n: number }> }>(
          `WITH gone AS (
             DELETE FROM requests WHERE id = ? AND status IN ('QUEUED', 'PROCESSING') AND refunded_at IS NULL
             RETURNING key_id, org_id, charge_month
           ), quota AS (
             UPDATE key_usage u SET used = GREATEST(u.used - 1, 0), updated_at = now()
             FROM gone g WHERE g.charge_month IS NOT NULL AND u.key_id = g.key_id AND u.month = g.charge_month
           ), balance AS (
             UPDATE organizations o SET balance = o.balance + 1
             FROM gone g WHERE g.charge_month IS NOT NULL AND o.id = g.org_id AND o.balance IS NOT NULL
           )
           SELECT count(*)::int AS n FROM gone`,
          [id],
        ),
      { idempotent: true },
    );
    return rows[0]?.n === 1;
  }

  async findById(id: string): Promise<RequestRecord | null> {
    const row = await withDbRetry(() => this.db<Row>('requests').where({ id }).first(), { idempotent: true });
    return row ? toRecord(row) : null;
  }
}

/**
 * Ends requests nobody will finish: those QUEUED/PROCESSING for longer than any request can
 * legitimately run (`olderThanMs`, the sync deadline plus a small margin), whichever replica
 * started them. Run at start and every few seconds, so a crash or a lost database never
 * leaves one PROCESSING past that bound. The sweep cannot tell why the outcome was never
 * recorded, and its message says only what is known.
 */
export async function failAbandonedRequests(db: Knex, olderThanMs: number, ofInstance?: string): Promise<number> {
  // With ofInstance: every unfinished request of that (restarted) instance, whatever its age.
  const where =
    ofInstance !== undefined
      ? { sql: `status IN ('QUEUED', 'PROCESSING') AND instance_id = ?`, bindings: [ofInstance] }
      : { sql: `status IN ('QUEUED', 'PROCESSING') AND created_at < now() - make_interval(secs => ?)`, bindings: [olderThanMs / 1000] };
  const { ended } = await endRequests(db, where, {
    error:
      ofInstance !== undefined
        ? 'request interrupted: the service restarted before it finished'
        : 'request not finished within the time limit: its outcome was never recorded (the service stopped or lost its database)',
    responseCode: 500,
    refund: true,
  });
  return ended;
}

/** Ends this process's unfinished requests (graceful shutdown, after the drain bound), refunded. */
export async function closeInstanceRequests(db: Knex, instanceId: string): Promise<number> {
  const { ended } = await endRequests(
    db,
    { sql: `status IN ('QUEUED', 'PROCESSING') AND instance_id = ?`, bindings: [instanceId] },
    { error: 'request interrupted: the service shut down before it finished', responseCode: 503, refund: true },
  );
  return ended;
}
