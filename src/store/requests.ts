/** PostgreSQL implementation of the recognition RequestRepository. */
import type { Knex } from 'knex';
import type { Detection } from '../recognition/detection.js';
import type { ClaimResult, NewRequest, RequestRecord, RequestRepository } from '../recognition/ports.js';

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

function toRow(n: NewRequest, instanceId: string) {
  return {
    key_id: n.keyId,
    org_id: n.orgId,
    kind: n.kind,
    external_id: n.externalId,
    source: n.source,
    source_url: n.sourceUrl,
    image_fingerprint: n.imageFingerprint,
    instance_id: instanceId,
  };
}

export class PgRequestRepository implements RequestRepository {
  constructor(
    private readonly db: Knex,
    /** Tags rows with the process that runs them (see closeInstanceRequests). */
    private readonly instanceId: string,
  ) {}

  async claimSync(n: NewRequest): Promise<ClaimResult> {
    // The partial unique index requests_idempotency_idx arbitrates: concurrent inserts for the
    // same (key, external_id) wait on each other and exactly one row survives.
    const inserted = (await this.db.raw(
      `insert into requests (key_id, org_id, kind, external_id, source, source_url, image_fingerprint, instance_id)
       values (:key_id, :org_id, :kind, :external_id, :source, :source_url, :image_fingerprint, :instance_id)
       on conflict (key_id, external_id) where kind = 'sync' and status <> 'ERROR' do nothing
       returning *`,
      toRow({ ...n, kind: 'sync' }, this.instanceId),
    )) as { rows: Row[] };
    if (inserted.rows.length === 1) return { claimed: true, record: toRecord(inserted.rows[0]) };
    const live = await this.db<Row>('requests')
      .where({ key_id: n.keyId, external_id: n.externalId, kind: 'sync' })
      .whereNot('status', 'ERROR')
      .first();
    return { claimed: false, existing: live ? toRecord(live) : null };
  }

  async createQueued(list: NewRequest[]): Promise<RequestRecord[]> {
    if (list.length === 0) return [];
    const rows = (await this.db('requests')
      .insert(list.map((n) => toRow(n, this.instanceId)))
      .returning('*')) as Row[];
    return rows.map(toRecord);
  }

  async startProcessing(id: string): Promise<boolean> {
    const { rows } = (await this.db.raw(
      `update requests set image_stored = true,
         status = case when status = 'QUEUED' then 'PROCESSING' else status end,
         started_at = case when status = 'QUEUED' then now() else started_at end
       where id = ? returning status`,
      [id],
    )) as { rows: Array<{ status: string }> };
    return rows[0]?.status === 'PROCESSING';
  }

  async finishDone(id: string, d: { results: Detection[]; model: { name: string; version: string }; processingTimeMs: number }): Promise<RequestRecord | null> {
    const rows = (await this.db('requests')
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
      })
      .returning('*')) as Row[];
    return rows.length === 1 ? toRecord(rows[0]) : null;
  }

  async finishError(id: string, f: { error: string; responseCode: number | null; processingTimeMs?: number }): Promise<RequestRecord | null> {
    const rows = (await this.db('requests')
      .where({ id })
      .whereIn('status', UNFINISHED)
      .update({
        status: 'ERROR',
        error: f.error,
        response_code: f.responseCode,
        processing_time_ms: f.processingTimeMs === undefined ? null : Math.round(f.processingTimeMs),
        finished_at: this.db.fn.now(),
      })
      .returning('*')) as Row[];
    return rows.length === 1 ? toRecord(rows[0]) : null;
  }

  async discard(id: string): Promise<boolean> {
    const n = await this.db('requests').where({ id }).whereIn('status', UNFINISHED).delete();
    return n === 1;
  }

  async findById(id: string): Promise<RequestRecord | null> {
    const row = await this.db<Row>('requests').where({ id }).first();
    return row ? toRecord(row) : null;
  }
}

/**
 * Ends requests nobody will finish: those QUEUED/PROCESSING for longer than any request can
 * legitimately run (`olderThanMs`, the sync deadline plus a margin), whichever replica started
 * them. Run at start and periodically, so a crash never leaves one PROCESSING forever.
 */
export async function failAbandonedRequests(db: Knex, olderThanMs: number, ofInstance?: string): Promise<number> {
  const q = db('requests').whereIn('status', UNFINISHED);
  // With ofInstance: every unfinished request of that (restarted) instance, whatever its age.
  if (ofInstance !== undefined) q.where({ instance_id: ofInstance });
  else q.where('created_at', '<', db.raw(`now() - make_interval(secs => ?)`, [olderThanMs / 1000]));
  return q.update({
      status: 'ERROR',
      error: 'request abandoned: the service stopped before it finished',
      response_code: 500,
      finished_at: db.fn.now(),
    });
}

/** Ends this process's unfinished requests (graceful shutdown, after the drain bound). */
export async function closeInstanceRequests(db: Knex, instanceId: string): Promise<number> {
  return db('requests').whereIn('status', UNFINISHED).where({ instance_id: instanceId }).update({
    status: 'ERROR',
    error: 'request interrupted: the service shut down before it finished',
    response_code: 503,
    finished_at: db.fn.now(),
  });
}
