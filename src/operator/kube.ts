/** The few API-server calls the operator makes, over @kubernetes/client-node. */
import {
  ApisApi,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  loadYaml,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type RecognitionService, type RecognitionServiceStatus } from './api/types.js';
import { FIELD_MANAGER, type ChildRef, type ClusterCapabilities, type KubeObject } from './desired/index.js';

export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

/** A short, log-safe description of an API error (the body's message when there is one). */
export function describeError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = e?.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      /* plain text body */
    }
  }
  const msg = (body as { message?: string } | undefined)?.message ?? e?.message ?? String(err);
  return typeof e?.code === 'number' ? `HTTP ${e.code}: ${msg}` : msg;
}

/**
 * client-node serializes a body through its generated model classes, which read renamed
 * members (NetworkPolicy `from` is `_from`, JSON schema `default` is `_default`) and drop
 * what they do not know. Plain manifests therefore go through its deserializer first (JSON
 * is YAML), so the round trip gives back exactly what we built (a unit test checks).
 */
export function toClientModel<T extends KubernetesObject>(obj: KubeObject | KubernetesObject): T {
  return loadYaml<T>(JSON.stringify(obj));
}

/** Called once per API request with its HTTP method and status code ("<error>" without a response). */
export type RequestObserver = (method: string, code: string) => void;

/** Runs one API call and reports it to the observer (rest_client_requests_total). */
export async function observed<T>(observer: RequestObserver | undefined, method: string, call: () => Promise<T>): Promise<T> {
  try {
    const out = await call();
    observer?.(method, method === 'POST' ? '201' : '200');
    return out;
  } catch (err) {
    observer?.(method, String(statusCode(err) ?? '<error>'));
    throw err;
  }
}

/** A list of RecognitionServices as the API server answers it. */
export interface RecognitionServiceList {
  items: RecognitionService[];
  metadata?: { resourceVersion?: string };
}

/**
 * What to ask the API server for to get objects' metadata only (controller-runtime's
 * OnlyMetadata): the operator watches Secrets this way, so their values never reach it.
 */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
export const METADATA_LIST_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

export const HANDOVER_MANAGER = `${FIELD_MANAGER}-handover`;

export class KubeClient {
  readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly apis: ApisApi;
  private readonly core: CoreV1Api;
  private caps: { value: ClusterCapabilities; at: number } | undefined;

  constructor(readonly kc: KubeConfig, private readonly capabilitiesTtlMs = 60_000, readonly observer?: RequestObserver) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.apis = kc.makeApiClient(ApisApi);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /**
   * Server-side apply with the operator's field manager. Without `force` a field another
   * manager holds with a different value fails the apply with 409 and the list of
   * conflicts (see field-conflicts.ts for what the reconciler then does). Only called for
   * children this resource controls (see the reconciler's ownership check).
   */
  async apply<T extends KubernetesObject>(obj: KubeObject, opts: { force?: boolean; manager?: string; dryRun?: 'All' } = {}): Promise<T> {
    return observed(this.observer, 'PATCH', () =>
      this.objects.patch(toClientModel<T>(obj), undefined, opts.dryRun, opts.manager ?? FIELD_MANAGER, opts.force ?? false, PatchStrategy.ServerSideApply),
    );
  }

  /** Creates the object unless one of that name exists; the created object, or undefined on a 409. */
  async createIfAbsent(obj: KubeObject): Promise<KubernetesObject | undefined> {
    try {
      return await observed(this.observer, 'POST', () => this.objects.create(toClientModel(obj), undefined, undefined, FIELD_MANAGER));
    } catch (err) {
      if (statusCode(err) === 409) return undefined;
      throw err;
    }
  }

  /** A Secret's metadata (PartialObjectMetadata: never its data), or undefined when it does not exist. */
  async secretMetadata(ref: ChildRef): Promise<KubernetesObject | undefined> {
    try {
      return await observed(this.observer, 'GET', () =>
        this.core.readNamespacedSecret({ name: ref.name, namespace: ref.namespace }, setHeaderOptions('Accept', METADATA_ONLY)),
      );
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubernetesObject>(ref: ChildRef): Promise<T | undefined> {
    try {
      return await observed(this.observer, 'GET', () =>
        this.objects.read<T>({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } }),
      );
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  /** Deletes the object only if it is still the one with this uid (never a successor someone else made). */
  async deleteIfExists(ref: ChildRef, uid?: string): Promise<boolean> {
    try {
      await observed(this.observer, 'DELETE', () =>
        this.objects.delete(
          { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } },
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          uid ? { preconditions: { uid } } : undefined,
        ),
      );
      return true;
    } catch (err) {
      if (statusCode(err) === 404 || (uid && statusCode(err) === 409)) return false;
      throw err;
    }
  }

  /** Every RecognitionService, or those of one namespace (a namespaced install's Role allows no more). */
  async listRecognitionServices(namespace?: string): Promise<RecognitionServiceList> {
    // The generated client types a custom object list as any; the CRD's schema is what the API server enforces.
    return observed(this.observer, 'LIST', async () =>
      (namespace === undefined
        ? await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL })
        : await this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace })) as RecognitionServiceList,
    );
  }

  /**
   * Merge-patches the status subresource (conditions are written whole); false when the
   * resource is gone. `ifUnchanged`: only if the resource is still at the resourceVersion it
   * was read at (the API server answers 409 Conflict otherwise).
   */
  async writeStatus(rs: RecognitionService, status: RecognitionServiceStatus, opts: { ifUnchanged?: boolean } = {}): Promise<boolean> {
    const precondition = opts.ifUnchanged && rs.metadata.resourceVersion ? { metadata: { resourceVersion: rs.metadata.resourceVersion } } : {};
    try {
      await observed(this.observer, 'PATCH', () =>
        this.custom.patchNamespacedCustomObjectStatus(
          {
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            namespace: rs.metadata.namespace,
            name: rs.metadata.name,
            body: { ...precondition, status: mergePatch(rs.status, status) },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
      return true;
    } catch (err) {
      // Deleted between the cache read and the write: nothing left to report on.
      if (statusCode(err) === 404) return false;
      throw err;
    }
  }

  /**
   * Sets one condition of a pod's status (a readiness gate's): a strategic merge patch, which
   * merges conditions by type, so the kubelet's own conditions are left as they are. `since`:
   * the transition time to keep (the status did not change); else now.
   */
  async setPodCondition(namespace: string, name: string, condition: { type: string; status: 'True' | 'False'; reason: string; message: string }, since?: string | Date): Promise<void> {
    const lastTransitionTime = since === undefined ? new Date().toISOString() : new Date(since).toISOString();
    const body = { status: { conditions: [{ ...condition, lastTransitionTime }] } };
    await observed(this.observer, 'PATCH', () =>
      this.core.patchNamespacedPodStatus({ name, namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)),
    );
  }

  /**
   * What optional APIs the cluster serves, from discovery; cached for a while. The one memory
   * kept across reconciles: discovery has no resourceVersion to key it by, so it is bounded by
   * time instead (client-go's cached discovery does the same); stale for at most the TTL, after
   * which the next reconcile asks again, and a restart only asks sooner.
   */
  async capabilities(): Promise<ClusterCapabilities> {
    if (this.caps && Date.now() - this.caps.at < this.capabilitiesTtlMs) return this.caps.value;
    const groups = await observed(this.observer, 'GET', () => this.apis.getAPIVersions());
    const monitoring = groups.groups.find((g) => g.name === 'monitoring.coreos.com');
    const value = { serviceMonitor: monitoring?.versions.some((v) => v.version === 'v1') ?? false };
    this.caps = { value, at: Date.now() };
    return value;
  }
}

/**
 * A JSON merge patch (RFC 7386) from `previous` to `next`: `next` itself, with null for every
 * field `previous` has and `next` lacks, at any depth, so that a field the new status drops
 * (a canary gone from status.rollout) is removed instead of kept. Arrays are replaced whole.
 */
export function mergePatch(previous: unknown, next: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(previous) || !isObject(next)) return next;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(previous)) if (!(key in next) || next[key] === undefined) out[key] = null;
  for (const [key, value] of Object.entries(next)) if (value !== undefined) out[key] = mergePatch(previous[key], value);
  return out;
}
