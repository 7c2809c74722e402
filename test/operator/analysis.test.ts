/**
 * A canary's automatic analysis as pure logic: one check's judgement (judge.ts), the rollout's
 * state machine (progress.ts), the weight the API pods are given from it, the PromQL each
 * side is read with, and the status merge patch that drops what the new status leaves out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withDefaults } from '../../src/operator/api/defaults.js';
import type { CanaryAnalysis, RecognitionService } from '../../src/operator/api/types.js';
import { judge, type Figures, type SideCounts } from '../../src/operator/analysis/judge.js';
import { afterCheck, checkDueIn, rolloutBefore, windowOf } from '../../src/operator/analysis/progress.js';
import { sideQueries, sideSelectors } from '../../src/operator/analysis/prometheus.js';
import { canaryModel } from '../../src/operator/desired/rollout.js';
import { desiredState } from '../../src/operator/desired/index.js';
import { mergePatch } from '../../src/operator/kube.js';
import { prometheusUrl } from '../../src/cli/commands/operator.js';
import { OperatorMetrics } from '../../src/operator/metrics.js';
import { sampleResource } from './fixtures.js';

const POLICY = (withDefaults(sampleResource({ triton: { ...sampleResource().spec.triton, modelVersion: '3' }, canary: { modelVersion: '4', weight: 10, analysis: {} as CanaryAnalysis } })).spec.canary!
  .analysis!) satisfies CanaryAnalysis;

const side = (over: Partial<SideCounts> = {}): SideCounts => ({ requests: 100, errors: 0, latencySumSeconds: 5, latencyCount: 100, ratings: 0, badRatings: 0, ...over });
const figures = (canary: Partial<SideCounts> = {}, stable: Partial<SideCounts> = {}): Figures => ({ canary: side(canary), stable: side(stable) });

test('the defaults of spec.canary.analysis: the window is the interval, so no two checks read the same requests', () => {
  assert.deepEqual(POLICY, {
    intervalSeconds: 60,
    stepWeight: 10,
    maxWeight: 50,
    failureLimit: 2,
    minRequests: 50,
    maxErrorRateIncrease: 1,
    maxLatencyIncrease: 50,
    maxBadFeedbackIncrease: 10,
    minFeedback: 20,
  });
  assert.equal(windowOf(POLICY), 60);
  assert.equal(windowOf({ ...POLICY, windowSeconds: 300 }), 300);
});

test('a check: inconclusive with too few requests on either side; each rule fails on its own; feedback only once both sides have enough', () => {
  assert.equal(judge(POLICY, figures({ requests: 49 })).outcome, 'inconclusive');
  assert.match(judge(POLICY, figures({}, { requests: 3 })).message, /too few requests in the window to judge \(stable 3; minRequests 50\)/);
  assert.equal(judge(POLICY, figures()).outcome, 'pass');

  // Error rate: 1 point above stable is allowed, 2 is not; relative to stable, not absolute.
  assert.equal(judge(POLICY, figures({ errors: 1 })).outcome, 'pass');
  const errors = judge(POLICY, figures({ errors: 2 }));
  assert.equal(errors.outcome, 'fail');
  assert.match(errors.message, /error rate 2% vs 0% \(at most \+1 points\)/);
  assert.equal(judge(POLICY, figures({ errors: 10 }, { errors: 9 })).outcome, 'pass');
  // Every request failed: no latency to compare, the error rate alone decides.
  assert.equal(judge(POLICY, figures({ errors: 100, latencyCount: 0, latencySumSeconds: 0 })).outcome, 'fail');

  // Latency: mean 50 ms on stable; 75 ms is +50 %, the limit; 76 ms is over.
  assert.equal(judge(POLICY, figures({ latencySumSeconds: 7.5 })).outcome, 'pass');
  const slow = judge(POLICY, figures({ latencySumSeconds: 7.6 }));
  assert.equal(slow.outcome, 'fail');
  assert.match(slow.message, /mean latency 76 ms vs 50 ms \(at most \+50%\)/);

  // Feedback: 19 ratings are not enough to compare; 20 on each side are.
  assert.equal(judge(POLICY, figures({ ratings: 19, badRatings: 19 }, { ratings: 100 })).outcome, 'pass');
  const bad = judge(POLICY, figures({ ratings: 20, badRatings: 5 }, { ratings: 20, badRatings: 2 }));
  assert.equal(bad.outcome, 'fail');
  assert.match(bad.message, /bad feedback 25% vs 10% \(at most \+10 points\)/);
  assert.equal(judge(POLICY, figures({ ratings: 20, badRatings: 4 }, { ratings: 20, badRatings: 2 })).outcome, 'pass');
});

function analysed(over: Partial<CanaryAnalysis> = {}, status?: RecognitionService['status']): RecognitionService {
  const rs = sampleResource({
    triton: { ...sampleResource().spec.triton, modelVersion: '3' },
    canary: { modelVersion: '4', weight: 10, analysis: { ...POLICY, ...over } },
  });
  return withDefaults({ ...rs, status });
}

test('a rollout: started at the spec weight, raised by stepWeight to maxWeight on passing checks, then promoted; the API pods get each weight', () => {
  const t0 = new Date('2026-11-26T12:00:00Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  let rs = analysed({ stepWeight: 25, maxWeight: 50 });
  const start = rolloutBefore(rs, t0);
  assert.equal(start.status.phase, 'Analysing');
  assert.equal(start.status.canaryWeight, 10);
  assert.deepEqual(start.status.canary, { name: 'centernet', version: '4' });
  assert.deepEqual(start.events.map((e) => e.reason), ['RolloutStarted']);
  assert.equal(checkDueIn(start.status, POLICY, at(59)), 1000);

  rs = { ...rs, status: { rollout: start.status } };
  assert.equal(rolloutBefore(rs, at(10)).events.length, 0, 'the same canary continues');
  assert.equal(canaryModel(rs)!.weight, 10);

  const policy = rs.spec.canary!.analysis!;
  let step = afterCheck(rs.status!.rollout!, policy, { figures: figures() }, at(60));
  assert.equal(step.status.canaryWeight, 35);
  assert.deepEqual(step.events.map((e) => [e.type, e.reason]), [['Normal', 'RolloutWeightRaised']]);
  assert.match(step.status.analysis!.message, /^weight 10 -> 35: canary as good as stable/);
  assert.deepEqual(step.status.analysis!.canary, { requests: 100, errorRatePercent: 0, meanLatencyMs: 50, ratings: 0 });
  rs = { ...rs, status: { rollout: step.status } };
  assert.equal(canaryModel(rs)!.weight, 35, 'the weight in force is the analysis’, not the spec’s 10');
  const env = (r: RecognitionService) =>
    (desiredState(r, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vision-api') as any).spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
  assert.equal(env(rs).find((e) => e.name === 'CANARY_WEIGHT')?.value, '35');

  step = afterCheck(step.status, policy, { figures: figures() }, at(120));
  assert.equal(step.status.canaryWeight, 50, 'capped at maxWeight');
  step = afterCheck(step.status, policy, { figures: figures() }, at(180));
  assert.equal(step.status.phase, 'Promoted');
  assert.equal(step.status.canaryWeight, 100);
  assert.equal(step.status.analysis!.passedChecks, 3);
  assert.deepEqual(step.events.map((e) => e.reason), ['RolloutPromoted']);
  assert.equal(checkDueIn(step.status, POLICY, at(1000)), undefined, 'no check after the end');
  rs = { ...rs, status: { rollout: step.status } };
  assert.equal(env(rs).find((e) => e.name === 'CANARY_WEIGHT')?.value, '100');
  assert.equal(rolloutBefore(rs, at(400)).status.phase, 'Promoted', 'final for this canary');

  // A new canary version starts over at the spec's weight.
  const next = { ...rs, spec: { ...rs.spec, canary: { ...rs.spec.canary!, modelVersion: '5' } } };
  assert.equal(canaryModel(next)!.weight, 10);
  assert.equal(rolloutBefore(next, at(400)).status.phase, 'Analysing');
});

test('a rollout: inconclusive and unreadable checks hold the weight and fail nothing; failureLimit failed checks roll back to weight 0', () => {
  const t0 = new Date('2026-11-26T12:00:00Z');
  const rs = analysed({ failureLimit: 2 });
  const policy = rs.spec.canary!.analysis!;
  let status = rolloutBefore(rs, t0).status;
  let step = afterCheck(status, policy, { figures: figures({ requests: 3 }) }, t0);
  assert.equal(step.status.canaryWeight, 10);
  assert.equal(step.events.length, 0);
  assert.match(step.status.analysis!.message, /^weight 10 held: too few requests/);
  assert.ok(step.status.analysis!.canary, 'an inconclusive check shows the figures it read');
  step = afterCheck(step.status, policy, { error: 'Prometheus at http://p did not answer' }, t0);
  assert.deepEqual(step.events.map((e) => [e.type, e.reason]), [['Warning', 'RolloutAnalysisUnavailable']]);
  assert.equal(step.status.analysis!.failedChecks, 0);
  assert.equal(step.status.analysis!.canary, undefined, 'no figures that would read as this check’s');

  step = afterCheck(step.status, policy, { figures: figures({ errors: 100, latencyCount: 0 }) }, t0);
  assert.equal(step.status.phase, 'Analysing');
  assert.equal(step.status.canaryWeight, 10);
  assert.deepEqual(step.events.map((e) => e.reason), ['RolloutCheckFailed']);
  step = afterCheck(step.status, policy, { figures: figures() }, t0);
  assert.equal(step.status.canaryWeight, 20, 'a pass in between raises the weight; failures are counted per rollout, not in a row');
  step = afterCheck(step.status, policy, { figures: figures({ latencySumSeconds: 50 }) }, t0);
  assert.equal(step.status.phase, 'RolledBack');
  assert.equal(step.status.canaryWeight, 0);
  assert.equal(step.status.analysis!.failedChecks, 2);
  assert.match(step.status.analysis!.message, /^rolled back \(weight 0\) after 2 failed checks: canary worse than stable: mean latency 500 ms vs 50 ms/);
  assert.deepEqual(step.events.map((e) => [e.type, e.reason]), [['Warning', 'RolloutRolledBack']]);
  status = step.status;
  assert.equal(canaryModel({ ...rs, status: { rollout: status } })!.weight, 0);

  // Without analysis the spec's weight is in force whatever the status says.
  const manual = { ...rs, spec: { ...rs.spec, canary: { modelVersion: '4', weight: 30 } }, status: { rollout: status } };
  assert.equal(canaryModel(manual)!.weight, 30);
  assert.equal(rolloutBefore(manual, t0).status.phase, 'Canary');
});

test('the PromQL of each side: namespace and service of the API, the model and version, first attempts only', () => {
  const q = { namespace: 'team-a', service: 'vision-api', windowSeconds: 300 };
  const same = sideSelectors({ ...q, stable: { name: 'centernet', version: '3' }, canary: { name: 'centernet', version: '' } });
  assert.equal(same.stable, 'namespace="team-a",service="vision-api",model="centernet",version="3"');
  assert.equal(same.canary, 'namespace="team-a",service="vision-api",model="centernet",version!="3"', "a canary of Triton's newest: every version but stable's");
  const other = sideSelectors({ ...q, stable: { name: 'centernet', version: '' }, canary: { name: 'shop-v2', version: '' } });
  assert.equal(other.stable, 'namespace="team-a",service="vision-api",model="centernet"');
  assert.equal(other.canary, 'namespace="team-a",service="vision-api",model="shop-v2"');
  const queries = sideQueries(same.canary, 300);
  assert.equal(queries.errors, `sum(increase(model_recognitions_total{${same.canary},attempt="first",outcome=~"ERROR|timeout"}[300s]))`);
  assert.equal(queries.latencyCount, `sum(increase(model_inference_duration_seconds_count{${same.canary}}[300s]))`);
});

test('the status merge patch removes what the new status leaves out, at any depth', () => {
  const before = { rollout: { phase: 'Canary', canary: { name: 'a', version: '' }, canaryWeight: 5 }, url: 'u', conditions: [{ type: 'Ready' }] };
  const after = { rollout: { phase: 'Stable', canaryWeight: 0 }, url: 'u', conditions: [] };
  assert.deepEqual(mergePatch(before, after), { rollout: { phase: 'Stable', canary: null, canaryWeight: 0 }, url: 'u', conditions: [] });
  assert.deepEqual(mergePatch(undefined, after), after);
});

test('--prometheus-url: the flag, else $PROMETHEUS_URL, else none; only an http(s) URL', () => {
  assert.equal(prometheusUrl({}, {}), undefined);
  assert.equal(prometheusUrl({}, { PROMETHEUS_URL: ' ' }), undefined);
  assert.equal(prometheusUrl({}, { PROMETHEUS_URL: 'http://prometheus-operated.monitoring.svc:9090' }), 'http://prometheus-operated.monitoring.svc:9090');
  assert.equal(prometheusUrl({ prometheusUrl: 'https://p.example/prom' }, { PROMETHEUS_URL: 'http://other:9090' }), 'https://p.example/prom');
  assert.throws(() => prometheusUrl({ prometheusUrl: 'prometheus:9090' }, {}), /expected http:\/\/ or https:\/\//);
  assert.throws(() => prometheusUrl({ prometheusUrl: 'not a url' }, {}), /not a URL/);
  assert.throws(() => prometheusUrl({ prometheusUrl: 'http://admin:secret@prometheus:9090' }, {}), (err: Error) => {
    assert.match(err.message, /no credentials in the URL/);
    assert.doesNotMatch(err.message, /secret/);
    return true;
  });
});

test('the rollout gauges: the phase (1 on the current one) and the weight of each resource, labelled with its canary', async () => {
  const metrics = new OperatorMetrics();
  metrics.reportConditionsOf(() => [
    { metadata: { namespace: 'shop', name: 'vision' }, status: { rollout: { phase: 'RolledBack', canary: { name: 'centernet', version: '4' }, canaryWeight: 0 } } },
    { metadata: { namespace: 'shop', name: 'ocr' }, status: { rollout: { phase: 'Stable', canaryWeight: 0 } } },
    { metadata: { namespace: 'shop', name: 'new' }, status: {} },
  ]);
  const text = await metrics.registry.metrics();
  assert.match(text, /\nrecognition_operator_rollout_phase\{namespace="shop",name="vision",canary="centernet:4",phase="RolledBack"\} 1\n/);
  assert.match(text, /\nrecognition_operator_rollout_phase\{namespace="shop",name="vision",canary="centernet:4",phase="Analysing"\} 0\n/);
  assert.match(text, /\nrecognition_operator_rollout_phase\{namespace="shop",name="ocr",canary="",phase="Stable"\} 1\n/);
  assert.match(text, /\nrecognition_operator_rollout_canary_weight\{namespace="shop",name="vision",canary="centernet:4"\} 0\n/);
  assert.doesNotMatch(text, /name="new"/, 'no rollout status yet: no series');
});
