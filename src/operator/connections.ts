/**
 * Connection reuse for the operator's API calls. @kubernetes/client-node (1.4) builds a new
 * https.Agent for every request of its generated clients, so each GET, apply or status
 * write opened its own TCP connection and paid a full TLS handshake, on the API server as
 * much as here: with 50 resources, about 1,700 handshakes before all were Ready (see
 * docs/performance.md, operator). This KubeConfig hands those requests one keep-alive agent
 * instead, rebuilt only when what the agent carries (CA, client certificate, server name)
 * changes. Watches (informers) keep their own long-lived connections.
 */
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

/** Idle sockets close well before the API server's own idle timeout (90 s), avoiding reuse races. */
export const IDLE_SOCKET_TIMEOUT_MS = 30_000;

/** The agent options client-node sets (applySecurityAuthentication): they decide which connections may be shared. */
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

type TlsOptions = Partial<Record<(typeof TLS_OPTIONS)[number], unknown>>;

function fingerprint(opts: TlsOptions): string {
  const h = crypto.createHash('sha256');
  for (const k of TLS_OPTIONS) {
    const v = opts[k];
    h.update(`${k}=${Buffer.isBuffer(v) ? v.toString('base64') : JSON.stringify(v ?? null)}\n`);
  }
  return h.digest('hex');
}

export class ReusingKubeConfig extends KubeConfig {
  private shared: { key: string; agent: http.Agent } | undefined;

  /** A copy of `kc` (clusters, users, contexts, current context) whose API calls share connections. */
  static from(kc: KubeConfig): ReusingKubeConfig {
    if (kc instanceof ReusingKubeConfig) return kc;
    const out = new ReusingKubeConfig();
    out.loadFromOptions({ clusters: kc.clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.getCurrentContext() });
    return out;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const agent = context.getAgent();
    // Only plain agents: a proxy agent (HTTPS or SOCKS proxy in the kubeconfig) is left as built.
    if (agent && (agent.constructor === https.Agent || agent.constructor === http.Agent)) context.setAgent(this.reuse(agent));
  }

  /** The shared keep-alive agent for these options (a new one when they changed; the old one's idle sockets time out). */
  private reuse(fresh: http.Agent): http.Agent {
    const opts = (fresh as http.Agent & { options?: TlsOptions }).options ?? {};
    const key = `${fresh.constructor === https.Agent ? 'https' : 'http'}:${fingerprint(opts)}`;
    if (this.shared?.key !== key) {
      const tls = Object.fromEntries(TLS_OPTIONS.filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]]));
      const common = { keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS };
      this.shared = { key, agent: fresh.constructor === https.Agent ? new https.Agent({ ...tls, ...common }) : new http.Agent(common) };
    }
    fresh.destroy();
    return this.shared.agent;
  }

  /** Closes the shared connections (the operator's stop). */
  closeConnections(): void {
    this.shared?.agent.destroy();
    this.shared = undefined;
  }
}
