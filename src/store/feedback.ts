/** PostgreSQL implementation of the FeedbackRepository: current rating + append-only history. */
import type { Knex } from 'knex';
import type { FeedbackRepository } from '../recognition/ports.js';

export class PgFeedbackRepository implements FeedbackRepository {
  constructor(private readonly db: Knex) {}

  async rate(requestId: string, keyId: string, rating: -1 | 0 | 1): Promise<-1 | 0 | 1 | null> {
    return await this.db.transaction(async (trx) => {
      // An existing row is locked until commit, so concurrent posts for a rated request see each other's rating.
      const before = await trx('feedback').where({ request_id: requestId }).forUpdate().first<{ rating: number } | undefined>('rating');
      await trx.raw(
        `insert into feedback (request_id, key_id, rating) values (?, ?, ?)
         on conflict (request_id) do update set rating = excluded.rating, key_id = excluded.key_id, updated_at = now()`,
        [requestId, keyId, rating],
      );
      await trx('feedback_history').insert({ request_id: requestId, key_id: keyId, rating });
      return before === undefined ? null : (before.rating as -1 | 0 | 1);
    });
  }
}

export interface FeedbackView {
  rating: number;
  history: Array<{ rating: number; created_at: Date }>;
}

/** The current rating and its history, oldest first (for operators and tests). */
export async function readFeedback(db: Knex, requestId: string): Promise<FeedbackView | null> {
  const current = await db('feedback').where({ request_id: requestId }).first<{ rating: number } | undefined>('rating');
  if (!current) return null;
  const history = await db('feedback_history').where({ request_id: requestId }).orderBy('id').select<FeedbackView['history']>('rating', 'created_at');
  return { rating: current.rating, history };
}
