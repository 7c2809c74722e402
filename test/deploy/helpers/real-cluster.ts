/**
 * The real one-node cluster of scripts/real-cluster.sh (kubelet, containerd, CNI bridge,
 * kube-proxy, CoreDNS) and the images of scripts/images.sh, driven the way a user drives
 * them: kubectl and helm as programs, HTTP to Services and pods.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { REPO_ROOT } from '../../helpers/fixtures.js';
import { eventually } from '../../helpers/eventually.js';
import { toolsDir } from '../../operator/helpers/cluster.js';

const run = promisify(execFile);
const BIG = 64 * 1024 * 1024;

export const CLUSTER_SCRIPT = path.join(REPO_ROOT, 'scripts/real-cluster.sh');
export const IMAGES_SCRIPT = path.join(REPO_ROOT, 'scripts/images.sh');

/** What `scripts/images.sh <command>` prints (`list`, `deps-list`: image references). */
export async function imagesScript(command: string): Promise<string> {
  return (await run(IMAGES_SCRIPT, [command])).stdout;
}

/** Why the suite cannot run here, or undefined. Under CI=true the caller fails instead of skipping. */
export async function missingPrerequisite(images: string[]): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'a real node (kubelet, containerd, a CNI bridge) needs root';
  try {
    await run('docker', ['image', 'inspect', ...images], { maxBuffer: BIG });
  } catch {
    return `the images (${images.join(', ')}) are not built: run scripts/images.sh build`;
  }
  try {
    await run(CLUSTER_SCRIPT, ['check'], { timeout: 30_000 });
  } catch (err) {
    return `scripts/real-cluster.sh check: ${String((err as { stderr?: string }).stderr ?? err).trim()}`;
  }
  return undefined;
}

/** `export NAME=value` lines (what `scripts/real-cluster.sh up` prints) as an object. */
export function parseExports(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^export ([A-Z_][A-Z0-9_]*)=['"]?([^'"\n]*)['"]?$/gm)) env[m[1]] = m[2]!;
  return env;
}

export interface RealCluster {
  env: Record<string, string>;
  kubeconfig: string;
  kubectl(args: string[], input?: string): Promise<string>;
  helm(args: string[]): Promise<string>;
  /** `kubectl port-forward` to `target` (e.g. service/x) on a free local port. */
  portForward(namespace: string, target: string, remotePort: number): { port: Promise<number>; stop(): void };
}

export async function clusterUp(): Promise<RealCluster> {
  const { stdout } = await run(CLUSTER_SCRIPT, ['up'], { timeout: 600_000, maxBuffer: BIG });
  const env = parseExports(stdout);
  const kubeconfig = env.KUBECONFIG;
  if (!kubeconfig) throw new Error(`scripts/real-cluster.sh up printed no KUBECONFIG:\n${stdout}`);
  const childEnv = { ...process.env, KUBECONFIG: kubeconfig };
  const tool = (name: string) => path.join(toolsDir(), name);
  const exec = (cmd: string, args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(cmd, args, { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${code}: ${err.trim()}`))));
      child.stdin.end(input ?? '');
    });
  return {
    env,
    kubeconfig,
    kubectl: (args, input) => exec(tool('kubectl'), args, input),
    helm: (args) => exec(tool('helm'), args),
    portForward(namespace, target, remotePort) {
      const child = spawn(tool('kubectl'), ['port-forward', '-n', namespace, target, `:${remotePort}`], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const port = eventually(() => Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1]) || undefined, { what: 'kubectl port-forward listening', timeoutMs: 60_000 });
      return { port, stop: () => void child.kill() };
    },
  };
}

export async function loadImages(images: string[]): Promise<void> {
  await run(CLUSTER_SCRIPT, ['load', ...images], { timeout: 600_000, maxBuffer: BIG });
}

export async function clusterDown(): Promise<void> {
  await run(CLUSTER_SCRIPT, ['down'], { timeout: 300_000, maxBuffer: BIG });
}

/**
 * What the cluster looks like now, for a failure message: nodes, pods, the RecognitionServices'
 * status, recent events, the operator's log and the tail of each pod that is not Ready. Each
 * part is bounded and a part that cannot be read says why, so a stuck run explains itself in
 * the CI output alone.
 */
export async function clusterState(cluster: RealCluster, operatorNamespace: string): Promise<string> {
  const tail = (text: string, lines: number) => text.trimEnd().split('\n').slice(-lines).join('\n');
  const part = async (title: string, args: string[], lines = 40) => {
    try {
      // Bounded: the report is wanted most when the API server is wedged.
      return `--- ${title}\n${tail(await cluster.kubectl([...args, '--request-timeout=10s']), lines)}`;
    } catch (err) {
      return `--- ${title}: ${err instanceof Error ? err.message : String(err)}`;
    }
  };
  const parts = [
    await part('nodes', ['get', 'nodes', '-o', 'wide']),
    await part('pods', ['get', 'pods', '-A', '-o', 'wide'], 60),
    await part('RecognitionService status', ['get', 'recsvc', '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} generation {.metadata.generation}: {.status}{"\\n"}{end}']),
    await part('events', ['get', 'events', '-A', '--sort-by=.lastTimestamp'], 40),
    await part('operator log', ['logs', '-n', operatorNamespace, 'deploy/recognition-operator', '--all-containers', '--tail=40'], 40),
  ];
  let pods: { metadata: { namespace: string; name: string }; status: { conditions?: { type: string; status: string }[] } }[] = [];
  try {
    pods = JSON.parse(await cluster.kubectl(['get', 'pods', '-A', '-o', 'json', '--request-timeout=10s'])).items;
  } catch {
    // the pods part above already says why
  }
  for (const pod of pods.filter((p) => !p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).slice(0, 6)) {
    parts.push(await part(`log of ${pod.metadata.namespace}/${pod.metadata.name} (not Ready)`, ['logs', '-n', pod.metadata.namespace, pod.metadata.name, '--all-containers', '--tail=15'], 15));
  }
  return parts.join('\n');
}
