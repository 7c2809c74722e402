/** The gRPC client with nothing listening: fails fast with UNAVAILABLE, sends nothing, honours the caller's abort. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceError } from '../../src/inference/backend.js';
import { TritonClient } from '../../src/inference/triton/client.js';
import { freePort } from '../helpers/local-server.js';

test('no server: UNAVAILABLE "not sent" once the connect wait is over, not at the request deadline', async () => {
  const client = new TritonClient({ url: `127.0.0.1:${await freePort()}`, connectTimeoutMs: 300 });
  try {
    await assert.rejects(client.serverReady({ deadline: Date.now() + 60_000 }), (err: unknown) => {
      assert.ok(err instanceof InferenceError);
      assert.equal(err.code, 'UNAVAILABLE');
      assert.match(err.message, /the request was not sent/);
      assert.doesNotMatch(err.message, /127\.0\.0\.1/);
      return true;
    });
  } finally {
    client.close();
  }
});

test('the caller aborting while the client waits for a connection: CANCELLED', async () => {
  const client = new TritonClient({ url: `127.0.0.1:${await freePort()}`, connectTimeoutMs: 30_000 });
  try {
    const ac = new AbortController();
    const p = client.serverReady({ deadline: Date.now() + 60_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(p, (err: unknown) => err instanceof InferenceError && err.code === 'CANCELLED');
  } finally {
    client.close();
  }
});

test('a closed client refuses calls: UNAVAILABLE', async () => {
  const client = new TritonClient({ url: `127.0.0.1:${await freePort()}` });
  client.close();
  await assert.rejects(client.serverLive(), (err: unknown) => err instanceof InferenceError && err.code === 'UNAVAILABLE');
});
