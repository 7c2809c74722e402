/**
 * Server-side apply conflicts on the operator's children. The operator applies without
 * `force`; a 409 lists each conflicting field and the manager that holds it. Fields the
 * operator must own (what makes the child work: selectors, labels, the containers' image,
 * command, ports, env, probes, mounts...) are taken back with `force`; any other field
 * stays with its manager and is reported. Everything here is pure.
 */
import type { KubeObject } from './desired/index.js';

export interface FieldConflict {
  /** The field as the API server names it: `.spec.template.spec.containers[name="api"].image`. */
  field: string;
  /** The field manager that holds it ("kubectl-edit", "someone", ...). */
  manager: string;
  /** What the API server says about that manager ("using apps/v1 at ..."), may be empty. */
  detail: string;
}

/** The conflicts of a 409 from a server-side apply, or undefined when the error is not one. */
export function applyConflicts(err: unknown): FieldConflict[] | undefined {
  const e = err as { code?: number; statusCode?: number; body?: unknown };
  if ((e?.code ?? e?.statusCode) !== 409) return undefined;
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  // StatusCause's Go field `Type` is `reason` in JSON.
  const causes = (body as { details?: { causes?: Array<{ reason?: string; message?: string; field?: string }> } } | undefined)?.details?.causes ?? [];
  const out: FieldConflict[] = [];
  for (const c of causes) {
    if (c.reason !== 'FieldManagerConflict' || !c.field) continue;
    // `conflict with "<manager>"[ with subresource "..."][ using <apiVersion>[ at <time>]]`
    const m = /^conflict with "((?:[^"\\]|\\.)*)"\s*(.*)$/.exec(c.message ?? '');
    out.push({ field: c.field, manager: m ? (JSON.parse(`"${m[1]}"`) as string) : (c.message ?? 'another manager'), detail: m?.[2] ?? '' });
  }
  return out.length > 0 ? out : undefined;
}

const CONTAINER = String.raw`\.spec\.template\.spec\.(?:initContainers|containers)\[name="[^"]*"\]`;
/** Fields every child's function rests on: the operator's labels, owner reference and desired hash. */
const COMMON = [/^\.metadata\.labels\./, /^\.metadata\.ownerReferences\b/, /^\.metadata\.annotations\.cv\.recognition\.io\/desired-hash$/];

/**
 * The fields the operator must own, by kind: without them the child does not do its job or
 * does not match the resource's spec in a way the status relies on. Anything else it sets
 * (resource requests and limits other than GPUs, pod annotations, security context,
 * strategy, grace period, Service type, HPA metrics and behavior, PDB maxUnavailable, ...)
 * may be taken over by another manager (a VPA, an SRE's `kubectl apply --server-side`):
 * the operator leaves it and reports the conflict.
 */
export const MUST_OWN: Record<string, RegExp[]> = {
  Deployment: [
    /^\.spec\.replicas$/, // only applied while no HPA exists: the spec's count
    /^\.spec\.selector\b/,
    /^\.spec\.template\.metadata\.labels\./,
    new RegExp(`^${CONTAINER}\\.(?:name|image|command|args|ports|env|envFrom|startupProbe|livenessProbe|readinessProbe|volumeMounts)(?:[.[]|$)`),
    new RegExp(`^${CONTAINER}\\.resources\\.(?:limits|requests)\\.nvidia\\.com/gpu$`),
    /^\.spec\.template\.spec\.volumes\b/,
    /^\.spec\.template\.spec\.(?:nodeSelector|tolerations)\b/, // GPU placement
  ],
  Service: [/^\.spec\.selector\b/, /^\.spec\.ports\b/, /^\.spec\.clusterIP$/],
  HorizontalPodAutoscaler: [/^\.spec\.scaleTargetRef\b/, /^\.spec\.minReplicas$/, /^\.spec\.maxReplicas$/],
  PodDisruptionBudget: [/^\.spec\.selector\b/],
  NetworkPolicy: [/^\.spec\b/], // a security boundary: all of it
  ServiceMonitor: [/^\.spec\.selector\b/, /^\.spec\.endpoints\b/],
};

export function mustOwn(kind: string, field: string): boolean {
  return [...COMMON, ...(MUST_OWN[kind] ?? [])].some((re) => re.test(field));
}

type Step = { field: string } | { key: Record<string, unknown> } | { value: unknown } | { index: number };

/** The bracketed element at `i` (just after "["), string-aware; returns its content and the index after "]". */
function bracket(path: string, i: number): [string, number] | undefined {
  let inString = false;
  for (let j = i; j < path.length; j++) {
    const ch = path[j];
    if (inString) {
      if (ch === '\\') j++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === ']') return [path.slice(i, j), j + 1];
  }
  return undefined;
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let inString = false;
  let depth = 0;
  let start = 0;
  for (let j = 0; j < s.length; j++) {
    const ch = s[j];
    if (inString) {
      if (ch === '\\') j++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(s.slice(start, j));
      start = j + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/**
 * Parses a field path against the object it is a path of: map keys may contain dots
 * (`.metadata.labels.app.kubernetes.io/name`), so a name is matched against the object's
 * own keys, the longest first. Undefined when the path does not lead into `root`.
 */
export function parseFieldPath(path: string, root: unknown): Step[] | undefined {
  const steps: Step[] = [];
  let node: unknown = root;
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') {
      if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
      const rest = path.slice(i + 1);
      const name = Object.keys(node)
        .filter((k) => rest.startsWith(k) && (rest.length === k.length || rest[k.length] === '.' || rest[k.length] === '['))
        .sort((a, b) => b.length - a.length)[0];
      if (name === undefined) return undefined;
      steps.push({ field: name });
      node = (node as Record<string, unknown>)[name];
      i += 1 + name.length;
    } else if (path[i] === '[') {
      const b = bracket(path, i + 1);
      if (!b || !Array.isArray(node)) return undefined;
      const [content, next] = b;
      let step: Step;
      try {
        if (content.startsWith('=')) step = { value: JSON.parse(content.slice(1)) };
        else if (/^\d+$/.test(content)) step = { index: Number(content) };
        else {
          const key: Record<string, unknown> = {};
          for (const part of splitTopLevel(content)) {
            const eq = part.indexOf('=');
            if (eq < 0) return undefined;
            key[part.slice(0, eq)] = JSON.parse(part.slice(eq + 1));
          }
          step = { key };
        }
      } catch {
        return undefined;
      }
      const at = indexIn(node, step);
      if (at < 0) return undefined;
      steps.push(step);
      node = node[at];
      i = next;
    } else {
      return undefined;
    }
  }
  return steps;
}

/** Loose equality for list keys: the path writes 8080, the manifest may hold "8080". */
const sameKey = (a: unknown, b: unknown) =>
  a === b || ((typeof a === 'number' || typeof a === 'string') && (typeof b === 'number' || typeof b === 'string') && String(a) === String(b));

function indexIn(list: unknown[], step: Step): number {
  if ('index' in step) return step.index < list.length ? step.index : -1;
  if ('value' in step) return list.findIndex((v) => JSON.stringify(v) === JSON.stringify(step.value));
  if ('key' in step) {
    return list.findIndex((v) => v !== null && typeof v === 'object' && Object.entries(step.key).every(([k, want]) => sameKey((v as Record<string, unknown>)[k], want)));
  }
  return -1;
}

/**
 * A copy of `obj` without the given fields: applying it gives those fields up to the
 * managers that hold them (the Kubernetes docs' way to leave a field to another manager).
 * Maps emptied by the removal go too; fields not found are ignored.
 */
export function withoutFields(obj: KubeObject, fields: string[]): KubeObject {
  const copy = structuredClone(obj);
  for (const field of fields) {
    const steps = parseFieldPath(field, copy);
    if (!steps || steps.length === 0) continue;
    const chain: unknown[] = [copy];
    for (const s of steps.slice(0, -1)) {
      const node = chain[chain.length - 1];
      chain.push('field' in s ? (node as Record<string, unknown>)[s.field] : (node as unknown[])[indexIn(node as unknown[], s)]);
    }
    // Remove the last step, then any map it left empty (never a list entry: keys identify it).
    for (let d = steps.length - 1; d >= 0; d--) {
      const parent = chain[d];
      const s = steps[d];
      if ('field' in s) delete (parent as Record<string, unknown>)[s.field];
      else (parent as unknown[]).splice(indexIn(parent as unknown[], s), 1);
      if (d === 0 || !('field' in steps[d - 1])) break;
      if (d - 1 === 0) break; // never remove a top-level member (spec, metadata) for being empty
      if (Object.keys(parent as object).length > 0) break;
    }
  }
  return copy;
}

/** "field (manager "x")" for messages. */
export function describeConflicts(conflicts: FieldConflict[]): string {
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
  return [...byManager].map(([m, fields]) => `${fields.join(', ')} (field manager "${m}")`).join('; ');
}

/**
 * On a child, the fields the operator's last apply left to other managers and to whom: the
 * cluster remembers the conflict, not the operator, so a restarted operator (or another
 * replica) recognises a standing conflict without applying again.
 */
export const LEFT_TO_OTHERS_ANNOTATION = 'cv.recognition.io/left-to-others';

/** `obj` with the fields left to others recorded on it (none: no annotation). */
export function recordLeftTo(obj: KubeObject, leftTo: FieldConflict[]): KubeObject {
  const annotations = { ...(obj.metadata.annotations ?? {}) };
  delete annotations[LEFT_TO_OTHERS_ANNOTATION];
  if (leftTo.length > 0) annotations[LEFT_TO_OTHERS_ANNOTATION] = JSON.stringify(leftTo.map((c) => ({ field: c.field, manager: c.manager })));
  return { ...obj, metadata: { ...obj.metadata, annotations } };
}

interface ManagedFieldsEntry {
  manager?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

/**
 * The conflicts recorded on a live child, if each field is still held by the manager it was
 * left to (read from managedFields); undefined when none are recorded or one has changed
 * hands (dropped, or taken by another manager): then only a new apply tells where things stand.
 */
export function standingConflicts(
  live: { metadata?: { annotations?: Record<string, string>; managedFields?: ManagedFieldsEntry[] } },
  desired: KubeObject,
): FieldConflict[] | undefined {
  const recorded = live.metadata?.annotations?.[LEFT_TO_OTHERS_ANNOTATION];
  if (!recorded) return undefined;
  let left: Array<{ field: string; manager: string }>;
  try {
    left = JSON.parse(recorded) as Array<{ field: string; manager: string }>;
  } catch {
    return undefined;
  }
  const entries = (live.metadata?.managedFields ?? []).filter((m) => m.subresource === undefined || m.subresource === '');
  const held = (c: { field: string; manager: string }) => {
    const steps = parseFieldPath(c.field, desired);
    return steps !== undefined && entries.some((m) => m.manager === c.manager && holds(m.fieldsV1, steps));
  };
  return Array.isArray(left) && left.length > 0 && left.every(held) ? left.map((c) => ({ ...c, detail: '' })) : undefined;
}

/** Whether a managedFields fieldsV1 set holds the field at these steps (structured-merge-diff's f:, k:, v:, i: keys). */
function holds(set: unknown, steps: Step[]): boolean {
  let node = set;
  for (const step of steps) {
    if (node === null || typeof node !== 'object') return false;
    const members = node as Record<string, unknown>;
    let next: string | undefined;
    if ('field' in step) next = `f:${step.field}`;
    else if ('index' in step) next = `i:${step.index}`;
    else {
      next = Object.keys(members).find((k) => {
        try {
          if ('value' in step) return k.startsWith('v:') && JSON.stringify(JSON.parse(k.slice(2))) === JSON.stringify(step.value);
          if (!k.startsWith('k:')) return false;
          const key = JSON.parse(k.slice(2)) as Record<string, unknown>;
          const want = Object.entries(step.key);
          return Object.keys(key).length === want.length && want.every(([name, v]) => sameKey(key[name], v));
        } catch {
          return false;
        }
      });
    }
    if (next === undefined || !(next in members)) return false;
    node = members[next];
  }
  return true;
}
