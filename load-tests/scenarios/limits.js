// limits: proves the per-key rate limit (10 calls per rolling minute over sync and batch
// together) and the 429 contract: body {error: "Too Many Requests", error_code
// RATE_LIMITED, message}, RateLimit-Limit/Remaining/Reset on every limited answer and
// Retry-After on the 429. Lookups have their own, separate limit. Then waits Retry-After
// and proves the key is admitted again. With QUOTA_KEY (a key with --quota 2) it also
// proves the monthly quota's 429 MONTHLY_QUOTA_EXCEEDED.
//   env: LIMITS_KEY (fresh key, default limits), QUOTA_KEY (optional),
//        RATE_LIMIT (10: the key's limit), CHECK_RECOVERY (true)
import { check, group, sleep } from 'k6';
import * as api from '../lib/api.js';
import { checkError, rateLimitHeaders } from '../lib/checks.js';
import { env, envBool, envNumber, required } from '../lib/config.js';
import { IMAGES } from '../lib/images.js';
import { correctnessThresholds, latencyThresholds, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';

const KEY = required('LIMITS_KEY');
const QUOTA_KEY = env('QUOTA_KEY', '');
const LIMIT = envNumber('RATE_LIMIT', 10);
const RECOVERY = envBool('CHECK_RECOVERY', true);
// The smallest fixture: the admitted calls are real recognitions, keep them cheap.
const SMALL = IMAGES.reduce((a, b) => (b.bytes < a.bytes ? b : a));
const SLOW = { p95: 15000, p99: 20000 };
const QUICK = { p95: 2000, p99: 3000 };

export const options = {
  scenarios: { limits: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '4m' } },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ strict: true }),
    // Latency is reported, not judged: this scenario proves behaviour, not speed.
    ...latencyThresholds({ sync_base64: SLOW, sync_limited: QUICK, batch_limited: QUICK, lookup: QUICK }, { reportOnly: true }),
    // Exactly the calls past the limit are refused: 1 sync + 1 batch (+1 over quota).
    'rejected_429{error_code:RATE_LIMITED}': ['count==2'],
    ...(QUOTA_KEY !== '' ? { 'rejected_429{error_code:MONTHLY_QUOTA_EXCEEDED}': ['count==1'] } : {}),
  },
};

function checkLimited429(r, endpoint) {
  const h = rateLimitHeaders(r.res);
  checkError(r.res, r.body, endpoint, 429, 'Too Many Requests', 'RATE_LIMITED');
  check(r.res, {
    [`${endpoint}: 429 has a message`]: () => r.body && typeof r.body.message === 'string' && r.body.message.length > 0,
    [`${endpoint}: 429 has Retry-After in 1..60 s`]: () => Number.isInteger(h.retryAfter) && h.retryAfter >= 1 && h.retryAfter <= 60,
    [`${endpoint}: 429 has RateLimit-Limit ${LIMIT}, Remaining 0`]: () => h.limit === LIMIT && h.remaining === 0,
    [`${endpoint}: 429 RateLimit-Reset in 0..60 s`]: () => Number.isInteger(h.reset) && h.reset >= 0 && h.reset <= 60,
  });
  return h;
}

export default function () {
  let firstId;
  let retryAfter = 60;
  group(`the first ${LIMIT} calls in a minute are admitted`, () => {
    for (let i = 0; i < LIMIT; i++) {
      const r = api.sync({ base64: SMALL.base64 }, { key: KEY, endpoint: 'sync_base64' });
      if (i === 0) firstId = r.body && r.body.request_id;
      const h = rateLimitHeaders(r.res);
      check(r.res, {
        'admitted: RateLimit-Limit is the key limit': () => h.limit === LIMIT,
        'admitted: RateLimit-Remaining counts down': () => h.remaining === LIMIT - 1 - i,
        'admitted: RateLimit-Reset in 0..60 s': () => Number.isInteger(h.reset) && h.reset >= 0 && h.reset <= 60,
        'admitted: no Retry-After': () => h.retryAfter === undefined,
      });
    }
  });

  group('the next sync and batch calls are refused with 429', () => {
    const s = api.sync({ base64: SMALL.base64 }, { key: KEY, endpoint: 'sync_limited', expected: [429] });
    retryAfter = checkLimited429(s, 'sync_limited').retryAfter || 60;
    // Sync and batch share the limit: a batch is refused too.
    const b = api.batch([SMALL.url], { key: KEY, endpoint: 'batch_limited', expected: [429] });
    checkLimited429(b, 'batch_limited');
  });

  group('lookups have their own limit', () => {
    const l = api.lookup(firstId, { key: KEY });
    const h = rateLimitHeaders(l.res);
    check(l.res, {
      'lookup: admitted while sync is limited': () => l.res.status === 200,
      'lookup: carries its own RateLimit-* headers': () => h.present && h.limit > LIMIT,
    });
  });

  if (RECOVERY) {
    group('after Retry-After the key is admitted again', () => {
      sleep(retryAfter + 1);
      const r = api.sync({ base64: SMALL.base64 }, { key: KEY, endpoint: 'sync_base64' });
      check(r.res, { 'recovered: admitted after Retry-After': () => r.res.status === 200 });
    });
  }

  if (QUOTA_KEY !== '') {
    group('monthly quota', () => {
      // The runner makes this key with --quota 2.
      api.sync({ base64: SMALL.base64 }, { key: QUOTA_KEY, endpoint: 'sync_base64' });
      api.sync({ base64: SMALL.base64 }, { key: QUOTA_KEY, endpoint: 'sync_base64' });
      const over = api.sync({ base64: SMALL.base64 }, { key: QUOTA_KEY, endpoint: 'sync_limited', expected: [429] });
      checkError(over.res, over.body, 'sync_limited', 429, 'Too Many Requests', 'MONTHLY_QUOTA_EXCEEDED');
    });
  }
}

export const handleSummary = summaryHandler((data) => {
  const c = (code) => data.metrics[`rejected_429{error_code:${code}}`]?.values.count ?? 0;
  return ['', `429 answers: ${c('RATE_LIMITED')} RATE_LIMITED (expected 2), ${c('MONTHLY_QUOTA_EXCEEDED')} MONTHLY_QUOTA_EXCEEDED`
    + `${QUOTA_KEY !== '' ? ' (expected 1)' : ' (no QUOTA_KEY)'}`];
});
