/** Console users and sessions for tests: real users in the test database, real sign-ins. */
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { hashPassword } from '../../src/console/passwords.js';
import { hashToken, REFRESH_GRACE_SECONDS } from '../../src/store/sessions.js';
import { addMember, createUser, type Role } from '../../src/store/users.js';

export const API = '/console/api/v1';
export const PASSWORD = 'correct horse battery staple';

let hash: Promise<string> | undefined;

/** A user with PASSWORD (hashed once per process: scrypt at OWASP cost is deliberately slow). */
export async function consoleUser(db: Knex, email: string, memberships: Array<{ orgId: string; role: Role }> = []): Promise<{ id: string; email: string }> {
  hash ??= hashPassword(PASSWORD);
  const user = await createUser(db, { email, passwordHash: await hash });
  for (const m of memberships) await addMember(db, m.orgId, user.id, m.role);
  return { id: user.id, email: user.email };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  access_expires_in: number;
  refresh_expires_in: number;
}

export async function login(app: FastifyInstance, email: string, password = PASSWORD): Promise<Tokens> {
  const res = await app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login ${email}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as Tokens;
}

export const bearer = (t: { access_token: string }) => ({ authorization: `Bearer ${t.access_token}` });

/**
 * Moves a spent refresh token's exchange to before its grace (REFRESH_GRACE_SECONDS), as if
 * it had been exchanged a while ago: presenting it again is then reuse, not a concurrent refresh.
 */
export async function agePastGrace(db: Knex, refreshToken: string): Promise<void> {
  const n = await db('console_tokens')
    .where({ token_hash: hashToken(refreshToken) })
    .whereNotNull('used_at')
    .update({ used_at: db.raw('now() - make_interval(secs => ?)', [REFRESH_GRACE_SECONDS + 1]) });
  if (n !== 1) throw new Error('agePastGrace: no spent refresh token');
}
