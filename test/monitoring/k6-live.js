// The load of the live monitoring test (test/monitoring/live-queries.test.ts): the repo's
// own smoke scenario, unchanged and as strict as in CI, beside a second scenario of
// requests a client gets refused (an unknown key: 401 INVALID_API_KEY; a key whose monthly
// quota is spent: 429 MONTHLY_QUOTA_EXCEEDED; a key of an organisation with no balance: 402
// INSUFFICIENT_BALANCE). Those count as failed in k6 (expected_response="false"), so the k6
// dashboard's failure panels and the service's rejection panels have data. Every check of
// the refused scenario must hold (its threshold): a wrong status fails the run.
//   env: as smoke.js, plus QUOTA_KEY (monthly quota 1) and BALANCE_KEY (balance 0)
import { check, sleep } from 'k6';
import http from 'k6/http';
import { newExternalId } from '../../load-tests/lib/api.js';
import { BASE_URL, HTTP_TIMEOUT, required } from '../../load-tests/lib/config.js';
import { REFERENCE_IMAGE } from '../../load-tests/lib/images.js';
import smoke, { options as smokeOptions } from '../../load-tests/scenarios/smoke.js';

const QUOTA_KEY = required('QUOTA_KEY');
const BALANCE_KEY = required('BALANCE_KEY');
const UNKNOWN_KEY = 'cvk_not-a-real-key-0000000000000000000000';

// Smoke's pass/fail thresholds stay, scoped to its own scenario: the refusals below are
// failures on purpose.
const SCOPED = new Set(['http_req_failed', 'unexpected_status', 'checks']);
const thresholds = {};
for (const [metric, rules] of Object.entries(smokeOptions.thresholds)) {
  thresholds[SCOPED.has(metric) ? `${metric}{scenario:smoke}` : metric] = rules;
}
thresholds['checks{scenario:refused}'] = ['rate==1'];

export const options = {
  ...smokeOptions,
  thresholds,
  scenarios: {
    smoke: smokeOptions.scenarios.smoke,
    // Spread over seconds, beside smoke: k6 writes a series at each flush it got samples in,
    // and a rate() needs two of them.
    refused: { executor: 'constant-vus', vus: 1, duration: '6s', exec: 'refused' },
  },
};

export default smoke;

/**
 * One sync call meant to be refused. Straight through k6/http, not lib/api.js: api.sync marks
 * the statuses it is told to expect as expected responses, and these must stay failures
 * (expected_response="false") for the k6 dashboard's failure panels. The same tags as api.js.
 */
function refusedSync(key) {
  const res = http.post(
    `${BASE_URL}/v1/cv/requests/sync`,
    JSON.stringify({ external_id: newExternalId('refused'), image_base64: REFERENCE_IMAGE.dataUri || REFERENCE_IMAGE.base64 }),
    { headers: { 'Content-Type': 'application/json', 'x-api-key': key }, timeout: HTTP_TIMEOUT, tags: { endpoint: 'sync_refused', name: 'POST /v1/cv/requests/sync' } },
  );
  let code;
  try {
    code = res.json('error_code');
  } catch {
    code = undefined;
  }
  return { status: res.status, code };
}

export function refused() {
  const unknown = refusedSync(UNKNOWN_KEY);
  // The quota key's one call of the month may still be left (200); after it, 429.
  const quota = refusedSync(QUOTA_KEY);
  const balance = refusedSync(BALANCE_KEY);
  check(null, {
    'refused: unknown key is 401 INVALID_API_KEY': () => unknown.status === 401 && unknown.code === 'INVALID_API_KEY',
    'refused: spent quota is 429 MONTHLY_QUOTA_EXCEEDED (after its one call)': () =>
      quota.status === 200 || (quota.status === 429 && quota.code === 'MONTHLY_QUOTA_EXCEEDED'),
    'refused: no balance is 402 INSUFFICIENT_BALANCE': () => balance.status === 402 && balance.code === 'INSUFFICIENT_BALANCE',
  });
  sleep(0.5);
}
