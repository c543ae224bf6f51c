/**
 * The published CommonJS build of breakwater/workers in a worker thread: `require` loads it,
 * and it opens a state made by another copy of the library (this test's, from src/).
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SharedBulkhead, SharedRateLimiter } from '../../src/workers/index.js';
import { root } from '../support/build.js';

const cjs = `${root}dist/workers/index.cjs`;

/** Runs `body` as a CommonJS worker with `SharedRateLimiter` and `SharedBulkhead` required. */
function runCommonJs(body: string, workerData: unknown): Promise<unknown> {
  const source = `
    const { SharedBulkhead, SharedRateLimiter } = require(${JSON.stringify(cjs)});
    const { parentPort, workerData } = require('node:worker_threads');
    ${body}`;
  const worker = new Worker(source, { eval: true, workerData });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  }).finally(() => worker.terminate());
}

describe('breakwater/workers from CommonJS', () => {
  it('a worker that requires the CommonJS build shares a limiter and a bulkhead made from src', async () => {
    if (!existsSync(cjs))
      throw new Error('This test runs against the build: run `npm run build` first.');
    const limiter = new SharedRateLimiter({ limit: 1, period: 3_600_000 });
    const pool = new SharedBulkhead({ maxConcurrent: 1 });
    expect(pool.admit(0)).toBe(0);
    const seen = await runCommonJs(
      `const limiter = new SharedRateLimiter(workerData.limiter);
       const pool = new SharedBulkhead(workerData.pool);
       parentPort.postMessage({ first: limiter.tryAcquire(), admit: pool.admit(0), inFlight: pool.inFlight });`,
      { limiter: limiter.state, pool: pool.state },
    );
    expect(seen).toEqual({ first: 0, admit: -1, inFlight: 1 });
    // The worker took the hour's one permit.
    expect(limiter.tryAcquire()).toBeGreaterThan(3_000_000);
  });
});
