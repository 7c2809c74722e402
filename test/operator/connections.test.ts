/**
 * The operator's API calls share keep-alive connections (src/operator/connections.ts),
 * against a real etcd + kube-apiserver: counted from Node's own HTTP client diagnostics
 * (a response on a socket that was not reused is a new TCP connection and TLS handshake).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dc from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ReusingKubeConfig } from '../../src/operator/connections.js';
import { KubeClient } from '../../src/operator/kube.js';
import { findTools, startCluster, type TestCluster } from './helpers/cluster.js';

const { tools, missing } = findTools();
if (!tools) console.log(`# connection reuse tests skipped: ${missing}`);

/** Runs fn and counts its requests to `host`, and how many of them opened a new connection. */
async function countConnections(host: string, fn: () => Promise<void>): Promise<{ requests: number; opened: number }> {
  const seen = { requests: 0, opened: 0 };
  const onResponse = (msg: unknown) => {
    const req = (msg as { request: ClientRequest & { reusedSocket?: boolean } }).request;
    if (`${req.host}:${(req.socket?.remotePort ?? '').toString()}` !== host) return;
    seen.requests++;
    if (!req.reusedSocket) seen.opened++;
  };
  dc.subscribe('http.client.response.finish', onResponse);
  try {
    await fn();
  } finally {
    dc.unsubscribe('http.client.response.finish', onResponse);
  }
  return seen;
}

describe('connection reuse against a real kube-apiserver', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let host: string;
  before(async () => {
    cluster = await startCluster(tools!);
    host = new URL(cluster.server).host;
  });
  after(async () => {
    await cluster?.stop();
  });

  const calls = async (kc: KubeConfig) => {
    const kube = new KubeClient(kc);
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 5; i++) {
      assert.ok(await kube.get({ apiVersion: 'v1', kind: 'Namespace', namespace: '', name: 'default' }));
      assert.equal(await kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: `absent-${i}` }), undefined);
      await core.listNamespace();
    }
  };

  test('plain client-node opens a connection per request (why the operator needs the pool)', async () => {
    const seen = await countConnections(host, () => calls(cluster.kubeConfig()));
    // 15 calls, and the object API's discovery of the kinds' resource names.
    assert.ok(seen.requests >= 15, `${seen.requests} requests`);
    assert.equal(seen.opened, seen.requests);
  });

  test("the operator's KubeConfig sends every request over one connection", async () => {
    const kc = ReusingKubeConfig.from(cluster.kubeConfig());
    try {
      const seen = await countConnections(host, () => calls(kc));
      assert.ok(seen.requests >= 15, `${seen.requests} requests`);
      assert.equal(seen.opened, 1);
      // Concurrent calls open what they need, then are reused too.
      const burst = await countConnections(host, async () => {
        await Promise.all(Array.from({ length: 4 }, () => calls(kc)));
      });
      assert.ok(burst.requests >= 60, `${burst.requests} requests`);
      assert.ok(burst.opened <= 4, `${burst.opened} connections opened for 4 concurrent callers`);
    } finally {
      kc.closeConnections();
    }
  });

  test('the copy keeps the cluster, user and context, and a second from() returns the same object', () => {
    const kc = cluster.kubeConfig();
    const copy = ReusingKubeConfig.from(kc);
    assert.equal(copy.getCurrentContext(), kc.getCurrentContext());
    assert.deepEqual(copy.getCurrentCluster(), kc.getCurrentCluster());
    assert.deepEqual(copy.getCurrentUser(), kc.getCurrentUser());
    assert.equal(ReusingKubeConfig.from(copy), copy);
  });
});
