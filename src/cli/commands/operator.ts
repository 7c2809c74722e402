/**
 * `recog operator`: the Kubernetes operator for RecognitionService resources. In a pod it
 * uses the ServiceAccount; elsewhere $KUBECONFIG or ~/.kube/config (or --kubeconfig).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { RecognitionOperator } from '../../operator/operator.js';
import { OperatorMetrics } from '../../operator/metrics.js';
import type { OperatorPeer } from '../../operator/desired/index.js';

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface OperatorCommandOptions {
  kubeconfig?: string;
  context?: string;
  leaseNamespace?: string;
  healthHost: string;
  healthPort: number;
  workers: number;
  resyncSeconds: number;
  clusterDomain?: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  /** Comma-separated namespaces to watch (default: $WATCH_NAMESPACES; unset or empty: every namespace). */
  watchNamespaces?: string;
  /** Prometheus's base URL for canary analysis (default: $PROMETHEUS_URL). */
  prometheusUrl?: string;
  /** The operator pods' labels, "k=v,k=v" (default: $OPERATOR_POD_LABELS), let through Triton's NetworkPolicy. */
  operatorPodLabels?: string;
}

/** A namespaced install's namespaces, from the flag or $WATCH_NAMESPACES ("a,b"); undefined: every namespace. */
export function watchNamespaces(o: Pick<OperatorCommandOptions, 'watchNamespaces'>, env: NodeJS.ProcessEnv): string[] | undefined {
  const list = (o.watchNamespaces ?? env.WATCH_NAMESPACES ?? '').split(',').map((ns) => ns.trim()).filter(Boolean);
  return list.length > 0 ? [...new Set(list)] : undefined;
}

function int(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

export function loadKubeConfig(o: Pick<OperatorCommandOptions, 'kubeconfig' | 'context'>): KubeConfig {
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromDefault(); // $KUBECONFIG, ~/.kube/config, then in-cluster
  if (o.context) kc.setCurrentContext(o.context);
  return kc;
}

/** The Lease lives in the operator's own namespace: flag, $POD_NAMESPACE, the pod's SA, else default. */
function leaseNamespace(o: OperatorCommandOptions, env: NodeJS.ProcessEnv): string {
  if (o.leaseNamespace) return o.leaseNamespace;
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return fs.readFileSync(SA_NAMESPACE_FILE, 'utf8').trim();
  } catch {
    return 'default';
  }
}

/** An http(s) base URL, or undefined for none. */
export function prometheusUrl(o: Pick<OperatorCommandOptions, 'prometheusUrl'>, env: NodeJS.ProcessEnv): string | undefined {
  const raw = (o.prometheusUrl ?? env.PROMETHEUS_URL ?? '').trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError(`--prometheus-url: not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError(`--prometheus-url: expected http:// or https://, got ${url.protocol}`);
  // The address goes into status messages and Events, which anyone reading the resource sees.
  if (url.username || url.password) throw new InvalidArgumentError('--prometheus-url: no credentials in the URL (they would show in status and Events); put an authenticating proxy in front of Prometheus');
  return raw;
}

/**
 * The operator's own pods for Triton's NetworkPolicy: their namespace ($POD_NAMESPACE, else
 * the Lease's) and the labels "k=v,k=v" from the flag or $OPERATOR_POD_LABELS; undefined
 * without labels.
 */
export function operatorPeer(o: Pick<OperatorCommandOptions, 'operatorPodLabels'>, env: NodeJS.ProcessEnv, namespace: string): OperatorPeer | undefined {
  const raw = (o.operatorPodLabels ?? env.OPERATOR_POD_LABELS ?? '').trim();
  if (!raw) return undefined;
  const labels: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    const m = /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)=([-A-Za-z0-9_.]*)\s*$/.exec(pair);
    if (!m) throw new InvalidArgumentError(`--operator-pod-labels: expected key=value pairs separated by commas, got ${JSON.stringify(pair)}`);
    labels[m[1]] = m[2];
  }
  return { namespace, labels };
}

function seconds(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`expected seconds from ${min} to ${max}`);
    return n;
  };
}

/**
 * Runs until SIGTERM/SIGINT (graceful stop, exit 0). Losing the Lease (an API server
 * outage longer than the renew deadline) stops reconciling, never the process: it keeps
 * campaigning and leads again once it can.
 */
export async function runOperator(o: OperatorCommandOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = pino({ name: 'recognition-operator', level: env.LOG_LEVEL ?? 'info' }, pino.destination(2));
  if (!(o.leaseDuration > o.renewDeadline && o.renewDeadline > o.retryPeriod)) {
    throw new InvalidArgumentError('--lease-duration must exceed --renew-deadline, which must exceed --retry-period');
  }
  const ownNamespace = leaseNamespace(o, env);
  const operator = new RecognitionOperator({
    kubeConfig: loadKubeConfig(o),
    leaseNamespace: ownNamespace,
    namespaces: watchNamespaces(o, env),
    identity: env.POD_NAME,
    workers: o.workers,
    resyncPeriodMs: o.resyncSeconds * 1000,
    health: { host: o.healthHost, port: o.healthPort },
    metrics: new OperatorMetrics({ defaultMetrics: true }),
    logger,
    clusterDomain: o.clusterDomain ?? env.CLUSTER_DOMAIN ?? 'cluster.local',
    prometheusUrl: prometheusUrl(o, env),
    operatorPeer: operatorPeer(o, env, env.POD_NAMESPACE || ownNamespace),
    leaseTiming: { leaseDurationMs: o.leaseDuration * 1000, renewDeadlineMs: o.renewDeadline * 1000, retryPeriodMs: o.retryPeriod * 1000 },
  });
  await operator.start();
  logger.info({ healthPort: operator.healthPort, namespaces: watchNamespaces(o, env) ?? 'all' }, 'probes on /healthz and /readyz, metrics on /metrics');
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'stopping');
      void operator.stop().then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

export function register(program: Command): void {
  program
    .command('operator')
    .description('Run the Kubernetes operator that reconciles RecognitionService resources (cv.recognition.io/v1alpha1)')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('--lease-namespace <ns>', 'namespace of the leader-election Lease (default: $POD_NAMESPACE or the pod namespace)')
    .option('--health-host <host>', 'address of /healthz, /readyz and /metrics', '0.0.0.0')
    .option('--health-port <port>', 'port of /healthz, /readyz and /metrics', int(0, 65535), 8081)
    .option('--workers <n>', 'concurrent reconciles (never two for the same resource)', int(1, 32), 2)
    .option('--resync-seconds <s>', 'period of the full resync', int(10, 86_400), 300)
    .option('--cluster-domain <domain>', "the cluster's DNS domain in service addresses (default: $CLUSTER_DOMAIN or cluster.local)")
    .option('--lease-duration <s>', 'leader election: how long a Lease is valid without renewal', seconds(1, 600), 15)
    .option('--renew-deadline <s>', 'leader election: the leader steps down when it cannot renew for this long', seconds(0.5, 600), 10)
    .option('--retry-period <s>', 'leader election: interval between acquire/renew attempts', seconds(0.1, 600), 2)
    .option('--watch-namespaces <list>', 'comma-separated namespaces to watch and manage (default: $WATCH_NAMESPACES, else every namespace)')
    .option('--prometheus-url <url>', "Prometheus's base URL, where canaries under automatic analysis are measured (default: $PROMETHEUS_URL; unset: no analysis runs)")
    .option('--operator-pod-labels <k=v,...>', "this operator's pod labels, let through Triton's NetworkPolicy to load model versions (default: $OPERATOR_POD_LABELS; unset: no such rule)")
    .action(async (o: OperatorCommandOptions) => runOperator(o));
}
