/** A pino logger with the service's options whose lines a test reads back (one JSON object a line). */
import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/telemetry/logging.js';

export function capturedLogger(level: string): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { logger: pino(loggerOptions(level), sink), lines };
}
