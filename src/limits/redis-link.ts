/**
 * The limiter's Redis connection and whether it is usable right now. Calls never wait
 * for Redis: no offline queue (a command while disconnected fails at once), a short
 * command timeout, and after a failure Redis is skipped for a short cool-off so a hung
 * server costs one timeout, not one per call. ioredis reconnects by itself; the first
 * successful command (or the reconnect) ends the degraded state.
 *
 * The timeout is ours, not ioredis's: a timer that fires late because this process's
 * event loop was busy (decoding an image, say) must not count as Redis being slow. Timers
 * run before pending socket reads, so a reply that arrived meanwhile would lose the race
 * and the call would be counted twice (once in Redis, once by the fallback). We give the
 * reply one more I/O turn before giving up.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { defineLimiterCommands, type LimiterRedis } from './redis-scripts.js';
import { backoffDelay } from '../backoff.js';
import { raceSignal, timeoutSignal } from '../deadline.js';

export interface LimitsLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisLinkOptions {
  url: string;
  logger: LimitsLogger;
  /** Called on every change between usable and degraded. */
  onChange: (degraded: boolean, reason?: string) => void;
  commandTimeoutMs?: number;
  coolOffMs?: number;
  /** How long createLimits waits for a first connection before starting degraded. */
  connectWaitMs?: number;
}

export class RedisLink {
  readonly client: LimiterRedis;
  private degraded = false;
  private skipUntil = 0;
  private readonly coolOffMs: number;
  private readonly timeoutMs: number;
  private closed = false;
  private probe?: NodeJS.Timeout;

  constructor(private readonly opts: RedisLinkOptions) {
    this.coolOffMs = opts.coolOffMs ?? 1000;
    this.timeoutMs = opts.commandTimeoutMs ?? 500;
    const redis = new Redis(opts.url, {
      enableOfflineQueue: false,
      // Backstop only, so commands to a hung server do not pile up for ever; see withTimeout.
      commandTimeout: Math.max(5000, this.timeoutMs * 4),
      connectTimeout: 1000,
      maxRetriesPerRequest: 0,
      // Keep trying for ever, at most one second apart, so recovery is quick; jittered, so
      // the pods that lost Redis together do not all reconnect in the same instant.
      retryStrategy: (times) => backoffDelay(times - 1, { baseMs: 50, capMs: 1_000, jitter: 'equal' }),
      connectionName: 'recognition-limits',
    });
    // Without a listener ioredis prints every connection error; state changes are logged instead.
    redis.on('error', (err: Error) => this.failed(err));
    redis.on('close', () => {
      if (!this.closed) this.failed(new Error('connection closed'));
    });
    redis.on('ready', () => this.succeeded());
    this.client = defineLimiterCommands(redis);
  }

  /** Resolves once connected, or after connectWaitMs (then the limiter starts degraded). */
  async waitReady(): Promise<void> {
    if (this.client.status === 'ready') return;
    // Rejects with the timeout's reason when Redis is not ready in time: that is "start degraded".
    await once(this.client, 'ready', { signal: timeoutSignal(this.opts.connectWaitMs ?? 1500) }).catch(() => undefined);
    if ((this.client.status as string) !== 'ready') this.failed(new Error(`not connected (${this.client.status})`));
  }

  /** Whether to try Redis for this call. */
  usable(): boolean {
    return !this.closed && this.client.status === 'ready' && Date.now() >= this.skipUntil;
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  /** Runs a Redis operation; on failure marks the link degraded and returns undefined. */
  async attempt<T>(op: (redis: LimiterRedis) => Promise<T>): Promise<T | undefined> {
    if (!this.usable()) {
      if (!this.closed) this.failed(new Error(`not connected (${this.client.status})`));
      return undefined;
    }
    try {
      const result = await this.withTimeout(op(this.client));
      this.succeeded();
      return result;
    } catch (err) {
      this.skipUntil = Date.now() + this.coolOffMs;
      this.failed(err as Error);
      return undefined;
    }
  }

  /** Rejects after timeoutMs and one more I/O turn without a reply (see the header). */
  private withTimeout<T>(pending: Promise<T>): Promise<T> {
    const late = new AbortController();
    timeoutSignal(this.timeoutMs).addEventListener(
      'abort',
      () => setImmediate(() => late.abort(new Error(`Redis did not answer within ${this.timeoutMs} ms`))),
      { once: true },
    );
    return raceSignal(pending, late.signal);
  }

  async ping(): Promise<boolean> {
    return (await this.attempt((r) => r.ping())) === 'PONG';
  }

  private failed(err: Error): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    // A server that hangs keeps the connection open, so no 'ready' will announce its
    // return: probe it, so recovery does not wait for traffic.
    this.probe = setInterval(() => {
      if (this.client.status === 'ready') this.client.ping().then(() => this.succeeded(), () => {});
    }, this.coolOffMs);
    this.probe.unref();
    this.opts.logger.warn(
      { err: { message: err.message } },
      'limiter: Redis unreachable; rate limits fall back to this process',
    );
    this.opts.onChange(true, err.message);
  }

  private succeeded(): void {
    if (!this.degraded || this.closed) return;
    this.degraded = false;
    this.skipUntil = 0;
    clearInterval(this.probe);
    this.opts.logger.info({}, 'limiter: Redis reachable again; shared limits restored');
    this.opts.onChange(false);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.probe);
    this.client.disconnect();
  }
}
