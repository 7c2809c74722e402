/**
 * Image retention: deletes stored images older than IMAGE_RETENTION_DAYS from the image store
 * (local or S3) and records the deletion on the request (image_deleted_at), so the image link
 * answers 410 while the lookup keeps returning the result.
 *
 * Safe with many replicas: each run takes a transaction-scoped PostgreSQL advisory lock with
 * pg_try_advisory_xact_lock; a replica that does not get it skips the run (another is
 * sweeping), and the lock ends with the transaction, even if the process dies.
 */
import type { Knex } from 'knex';
import type { ImageStore } from '../recognition/image-ports.js';

/** Arbitrary but fixed: the advisory lock key of the image retention sweep ("imgs" in ASCII). */
export const RETENTION_LOCK_KEY = 0x696d6773;
const BATCH = 200;

export interface SweepResult {
  /** False when another replica held the lock. */
  ran: boolean;
  deleted: number;
  /** Deletions the store refused; retried by the next run. */
  failed: number;
}

/** Whether the retention sweep removed this request's image. */
export async function imageRemoved(db: Knex, requestId: string): Promise<boolean> {
  const row = await db('requests').where({ id: requestId }).whereNotNull('image_deleted_at').first<{ id: string } | undefined>('id');
  return row !== undefined;
}

/**
 * One sweep: batches of the oldest expired images, each deleted from the store then marked in
 * the same transaction that holds the lock. An image is marked only after the store confirmed
 * its deletion, so a store outage leaves it for the next run rather than recording a lie.
 */
export async function sweepExpiredImages(db: Knex, store: Pick<ImageStore, 'delete'>, retentionDays: number, now: Date = new Date()): Promise<SweepResult> {
  if (retentionDays <= 0) return { ran: false, deleted: 0, failed: 0 };
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let deleted = 0;
  for (;;) {
    const batch = await db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: Array<{ locked: boolean }> }>('SELECT pg_try_advisory_xact_lock(?) AS locked', [RETENTION_LOCK_KEY]);
      if (!rows[0].locked) return null;
      const due = await trx('requests')
        .select<Array<{ id: string }>>('id')
        .where('image_stored', true)
        .whereNull('image_deleted_at')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(BATCH)
        .forUpdate()
        .skipLocked();
      const done: string[] = [];
      let failed = 0;
      for (const { id } of due) {
        try {
          await store.delete(id);
          done.push(id);
        } catch {
          // The store is failing: stop here rather than hold the lock through a batch of timeouts.
          failed += 1;
          break;
        }
      }
      if (done.length > 0) await trx('requests').whereIn('id', done).update({ image_deleted_at: trx.fn.now() });
      return { seen: due.length, done: done.length, failed };
    });
    if (batch === null) return { ran: deleted > 0, deleted, failed: 0 };
    deleted += batch.done;
    if (batch.failed > 0) return { ran: true, deleted, failed: batch.failed };
    if (batch.seen < BATCH) return { ran: true, deleted, failed: 0 };
  }
}
