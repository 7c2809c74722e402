/** The few API-server calls the operator makes, over @kubernetes/client-node. */
import {
  ApisApi,
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

export class KubeClient {
  readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly apis: ApisApi;
  private caps: { value: ClusterCapabilities; at: number } | undefined;

  constructor(readonly kc: KubeConfig, private readonly capabilitiesTtlMs = 60_000) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.apis = kc.makeApiClient(ApisApi);
  }

  /** Server-side apply with the operator's field manager; force takes fields back from hand edits. */
  async apply<T extends KubernetesObject>(obj: KubeObject, dryRun?: 'All'): Promise<T> {
    return (await this.objects.patch(toClientModel(obj), undefined, dryRun, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as T;
  }

  /** Creates the object unless one of that name exists (a 409 is success); true when created. */
  async createIfAbsent(obj: KubeObject): Promise<boolean> {
    try {
      await this.objects.create(toClientModel(obj), undefined, undefined, FIELD_MANAGER);
      return true;
    } catch (err) {
      if (statusCode(err) === 409) return false;
      throw err;
    }
  }

  async deleteIfExists(ref: ChildRef): Promise<boolean> {
    try {
      await this.objects.delete({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } });
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return false;
      throw err;
    }
  }

  async listRecognitionServices(): Promise<{ items: RecognitionService[]; metadata?: { resourceVersion?: string } }> {
    return this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL });
  }

  /** Merge-patches the status subresource (conditions are written whole). */
  async writeStatus(rs: RecognitionService, status: RecognitionServiceStatus): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace: rs.metadata.namespace, name: rs.metadata.name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** What optional APIs the cluster serves, from discovery; cached for a while. */
  async capabilities(): Promise<ClusterCapabilities> {
    if (this.caps && Date.now() - this.caps.at < this.capabilitiesTtlMs) return this.caps.value;
    const groups = await this.apis.getAPIVersions();
    const monitoring = groups.groups.find((g) => g.name === 'monitoring.coreos.com');
    const value = { serviceMonitor: monitoring?.versions.some((v) => v.version === 'v1') ?? false };
    this.caps = { value, at: Date.now() };
    return value;
  }
}
