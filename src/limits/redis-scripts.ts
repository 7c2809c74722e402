/**
 * The Lua scripts the limiter runs in Redis. Each runs atomically on the server, so a
 * check-and-count is one round trip and concurrent calls from any number of replicas
 * are serialised by Redis itself. Every script touches exactly one key (Cluster-safe).
 */
import type { Redis } from 'ioredis';

/**
 * Sliding log. KEYS[1]: sorted set of admitted call times (ms).
 * ARGV: limit, window ms, unique member, now ms or ''. Without `now` the script reads
 * Redis's own clock, so replicas with skewed clocks still share one timeline.
 * Returns {admitted 1|0, calls in window, ms until room}.
 */
const SLIDING_LOG = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {1, count + 1, tonumber(oldest[2]) + window - now}
end
local blocker = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return {0, count, tonumber(blocker[2]) + window - now}
`;

export interface LimiterCommands {
  limiterSlidingLog(key: string, limit: number, windowMs: number, member: string, now: number | ''): Promise<[number, number, number]>;
}

export type LimiterRedis = Redis & LimiterCommands;

/** Registers the script (ioredis runs it by EVALSHA, falling back to EVAL after a restart). */
export function defineLimiterCommands(redis: Redis): LimiterRedis {
  redis.defineCommand('limiterSlidingLog', { numberOfKeys: 1, lua: SLIDING_LOG });
  return redis as LimiterRedis;
}
