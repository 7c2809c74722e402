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

/**
 * Fast monthly-quota counter. KEYS[1]: units used this month (a cache of PostgreSQL).
 * ARGV: units, quota. Returns {-1, 0} when the counter is absent (to be rebuilt from
 * PostgreSQL), {0, used} when the units do not fit, {1, used after} when counted.
 */
const QUOTA_TAKE = `
local used = redis.call('GET', KEYS[1])
if not used then return {-1, 0} end
used = tonumber(used)
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return {0, used} end
return {1, redis.call('INCRBY', KEYS[1], units)}
`;

/** Gives units back to the counter, if it exists, never below zero. ARGV: units. */
const QUOTA_GIVE = `
local used = redis.call('GET', KEYS[1])
if not used then return -1 end
local left = tonumber(used) - tonumber(ARGV[1])
if left < 0 then left = 0 end
redis.call('SET', KEYS[1], left, 'KEEPTTL')
return left
`;

export interface LimiterCommands {
  limiterSlidingLog(key: string, limit: number, windowMs: number, member: string, now: number | ''): Promise<[number, number, number]>;
  limiterQuotaTake(key: string, units: number, quota: number): Promise<[number, number]>;
  limiterQuotaGive(key: string, units: number): Promise<number>;
}

export type LimiterRedis = Redis & LimiterCommands;

/** Registers the scripts (ioredis runs them by EVALSHA, falling back to EVAL after a restart). */
export function defineLimiterCommands(redis: Redis): LimiterRedis {
  redis.defineCommand('limiterSlidingLog', { numberOfKeys: 1, lua: SLIDING_LOG });
  redis.defineCommand('limiterQuotaTake', { numberOfKeys: 1, lua: QUOTA_TAKE });
  redis.defineCommand('limiterQuotaGive', { numberOfKeys: 1, lua: QUOTA_GIVE });
  return redis as LimiterRedis;
}
