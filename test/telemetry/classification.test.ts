/** Rejection reasons and gRPC status names: closed sets that agree with the error catalogue. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_CATALOGUE, REJECTION_REASONS, type ErrorCode } from '../../src/api/errors.js';
import { InferenceError } from '../../src/inference/backend.js';
import { grpcStatusName } from '../../src/telemetry/instrument.js';

test('every 400, 401, 402, 413 and 429 code of the catalogue is a rejection with a reason', () => {
  for (const [code, spec] of Object.entries(ERROR_CATALOGUE) as Array<[ErrorCode, { status: number }]>) {
    if ([400, 401, 402, 413, 429].includes(spec.status)) assert.ok(REJECTION_REASONS[code], `${code} (${spec.status}) has a rejection reason`);
  }
  assert.equal(REJECTION_REASONS.RATE_LIMITED, 'rate_limit');
  assert.equal(REJECTION_REASONS.MONTHLY_QUOTA_EXCEEDED, 'quota');
  assert.equal(REJECTION_REASONS.INSUFFICIENT_BALANCE, 'balance');
  assert.equal(REJECTION_REASONS.KEY_SUSPENDED, 'auth');
  // outcomes of accepted work and server failures are not rejections
  for (const code of ['PROCESSING_TIMEOUT', 'INTERNAL_ERROR', 'REQUEST_NOT_FOUND', 'REQUEST_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED'] as ErrorCode[]) {
    assert.equal(REJECTION_REASONS[code], undefined, code);
  }
  for (const code of Object.keys(REJECTION_REASONS)) assert.ok(code in ERROR_CATALOGUE, `${code} is a catalogue code`);
});

test('gRPC status names come from the driver error kept as cause, else from the InferenceError code', () => {
  assert.equal(grpcStatusName(new InferenceError('UNAVAILABLE', 'x', { cause: { code: 14 } })), 'UNAVAILABLE');
  assert.equal(grpcStatusName(new InferenceError('INTERNAL', 'x', { cause: { code: 3 } })), 'INVALID_ARGUMENT');
  assert.equal(grpcStatusName(new InferenceError('INTERNAL', 'x', { cause: { code: 99 } })), 'UNKNOWN');
  assert.equal(grpcStatusName(new InferenceError('DEADLINE_EXCEEDED', 'budget ran out before the call')), 'DEADLINE_EXCEEDED');
  assert.equal(grpcStatusName(new InferenceError('MODEL_NOT_READY', 'x')), 'UNAVAILABLE');
  assert.equal(grpcStatusName(new Error('x')), 'UNKNOWN');
});
