/**
 * The models the v2 server serves, and Triton's model repository extension over them:
 * the index of the repository with each model's state, and loading or unloading one model
 * while the server runs (RepositoryModelLoad / RepositoryModelUnload). A model being
 * unloaded stops taking requests at once (NOT_FOUND "has no available versions", as
 * Triton answers), lets the requests it holds finish, then frees its backend.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { V2Error } from './errors.js';
import { discoverModels, subdirectories, type RepositoryModel } from './model-repository.js';
import type { ServedModel } from './served-model.js';
import { status as Status } from '@grpc/grpc-js';

export type ModelState = 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

export interface ModelIndexEntry {
  name: string;
  version: string;
  /** Empty for a model of the repository that was never loaded (as Triton lists it). */
  state: ModelState | '';
  reason: string;
}

export interface ModelRegistryOptions {
  modelRepository: string;
  /** Builds the served model (not loaded yet) for one model of the repository. */
  createModel(model: RepositoryModel): ServedModel;
  log(message: string): void;
}

export class ModelRegistry {
  private readonly loaded = new Map<string, ServedModel>();
  private readonly states = new Map<string, { version: string; state: ModelState; reason: string }>();
  /** One load or unload at a time per model, in call order. */
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: ModelRegistryOptions) {}

  get(name: string): ServedModel | undefined {
    return this.loaded.get(name);
  }

  all(): ServedModel[] {
    return [...this.loaded.values()];
  }

  /** Triton's strict readiness: every model the server knows is loaded and ready (an unloaded one counts against it). */
  allReady(): boolean {
    return [...this.states.values()].every((s) => s.state === 'READY') && this.all().every((m) => m.isReady());
  }

  /** True for a model the server knows (loaded once, unloaded or failed) but does not serve now. */
  isKnownButNotLoaded(name: string): boolean {
    return !this.loaded.has(name) && this.states.has(name);
  }

  /** Loads (or reloads) one model of the repository; the old instance serves until the new one is ready. */
  load(name: string): Promise<void> {
    return this.serialize(name, async () => {
      let found: RepositoryModel;
      try {
        [found] = (await discoverModels(this.opts.modelRepository, [name])) as [RepositoryModel];
      } catch (err) {
        // Triton's wording for a model it cannot find or read in the repository.
        const reason = (err as Error).message;
        if (this.states.has(name) && !this.loaded.has(name)) this.states.set(name, { ...this.states.get(name)!, state: 'UNAVAILABLE', reason });
        throw new V2Error(Status.INTERNAL, `failed to load '${name}', failed to poll from model repository`);
      }
      const model = this.opts.createModel(found);
      const previous = this.loaded.get(name);
      if (!previous) this.states.set(name, { version: found.version, state: 'LOADING', reason: '' });
      try {
        await model.load();
      } catch (err) {
        await model.unload().catch(() => {});
        if (!previous) this.states.set(name, { version: found.version, state: 'UNAVAILABLE', reason: (err as Error).message });
        throw new V2Error(Status.INTERNAL, `failed to load '${name}': ${(err as Error).message}`);
      }
      this.loaded.set(name, model);
      this.states.set(name, { version: found.version, state: 'READY', reason: '' });
      this.opts.log(`model ${name} version ${found.version} loaded (max_batch_size ${found.config.maxBatchSize})`);
      if (previous) await this.retire(previous);
    });
  }

  /** Unloads a model; a model that is not loaded is fine (Triton answers OK too). */
  unload(name: string): Promise<void> {
    return this.serialize(name, async () => {
      const model = this.loaded.get(name);
      if (!model) return;
      this.loaded.delete(name);
      this.states.set(name, { version: model.version, state: 'UNLOADING', reason: '' });
      await this.retire(model);
      this.states.set(name, { version: model.version, state: 'UNAVAILABLE', reason: 'unloaded' });
      this.opts.log(`model ${name} unloaded`);
    });
  }

  /** Every model directory of the repository (with a config.pbtxt) and every model known, by name. */
  async index(readyOnly: boolean): Promise<ModelIndexEntry[]> {
    const names = new Set(this.states.keys());
    try {
      for (const name of await subdirectories(this.opts.modelRepository)) {
        if (await stat(path.join(this.opts.modelRepository, name, 'config.pbtxt')).then(() => true, () => false)) names.add(name);
      }
    } catch {
      // The repository went away: the known models are still worth listing.
    }
    const entries = [...names].sort().map((name): ModelIndexEntry => {
      const s = this.states.get(name);
      return s ? { name, version: s.version, state: s.state, reason: s.reason } : { name, version: '', state: '', reason: '' };
    });
    return readyOnly ? entries.filter((e) => e.state === 'READY') : entries;
  }

  /** Unloads everything now (server shutdown): queued requests are refused, running ones end. */
  async unloadAll(): Promise<void> {
    const models = this.all();
    this.loaded.clear();
    await Promise.allSettled(models.map((m) => m.unload()));
  }

  private async retire(model: ServedModel): Promise<void> {
    await model.drain();
    await model.unload();
  }

  private serialize(name: string, fn: () => Promise<void>): Promise<void> {
    const run = (this.pending.get(name) ?? Promise.resolve()).catch(() => {}).then(fn);
    this.pending.set(name, run);
    void run.finally(() => {
      if (this.pending.get(name) === run) this.pending.delete(name);
    }).catch(() => {});
    return run;
  }
}
