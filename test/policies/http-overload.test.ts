/**
 * Concurrency limits in front of a real HTTP dependency on loopback that slows down as work
 * piles up (C = 10 workers of a fixed 100 ms behind a FIFO queue), driven by 6 x C closed-loop
 * clients: no limit, a bulkhead tuned to C and one tuned badly to 3 x C, side by side with an
 * unloaded baseline (one client). The table is printed; each run asserts what it shows.
 *
 * Real time cannot be avoided here. The bounds rest on queueing, which only a slower machine
 * can add to, and leave a whole service time (100 ms) of slack to the machine's own delays:
 * - No limit: 60 requests at 10 workers wait about 6 services each (a slow machine only adds to
 *   that), against twice an unloaded p99 of about 1 service: it takes two of the ~100 unloaded
 *   calls delayed by more than 200 ms each to break it (its p99 is their second largest).
 * - Tuned bulkhead: its calls never wait at the server, so its p99 is the unloaded one plus the
 *   machine's noise, against twice that: it takes more than 1 % of its ~480 calls delayed by
 *   more than 100 ms, one stall of the whole process longer than a service time at least.
 *   On a 2-core machine with up to six busy-looping processes or other test files beside it,
 *   this ratio stayed below 1.2 and the no-limit one above 4.
 * - Goodput (answers within 250 ms): none without a limit, whose answers take 6 services; over
 *   half of capacity with the tuned bulkhead unless the machine adds a service time on average.
 * - Medians where a claim does not need the tail; in-flight counts are exact (the bulkhead
 *   counts, the server counts) or means over 100 ms (see `InFlightSample`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bulkhead, pipeline } from '../../src/index.js';
import {
  type OverloadRunResult,
  overloadRun,
  overloadTable,
  unloadedRun,
} from '../support/overloadRun.js';
import type { Runner } from '../support/queueing.js';

/** Workers of the dependency (its capacity). */
const C = 10;
const SERVICE_MS = 100;
const SERVER = { workers: C, serviceMs: SERVICE_MS };
const CLIENTS = 6 * C;
const WARMUP_MS = 500;
const WINDOW_MS = 5_000;
/** About 100 calls, so that its p99 is the second largest: one stall cannot move it. */
const UNLOADED_MS = 10_000;
/** The callers' deadline: answers later than this are not goodput (2.5 service times). */
const DEADLINE_MS = 250;
/** C / S: 100 answers per second. */
const CAPACITY = (C * 1000) / SERVICE_MS;

/** A limit's run: the pipeline the calls go through (none: straight to the server), its limit. */
interface Limit {
  readonly via?: Runner;
  readonly limit?: () => number;
}

/** A bulkhead of `maxConcurrent` and nothing else. */
function bulkheadOf(maxConcurrent: number): Limit {
  const gate = bulkhead({ maxConcurrent });
  return { via: pipeline(gate), limit: () => gate.maxConcurrent };
}

/**
 * The limits compared, one table row and one `it` each, built afresh for their run. The adaptive
 * limit's run is one more entry here, `adaptive: { name: 'adaptive limit', build: () => ... }`
 * with `limit: () => gate.limit` read into its series, and one more `it` below.
 */
const LIMITS = {
  none: { name: 'no limit', build: (): Limit => ({}) },
  tuned: { name: `bulkhead ${C}`, build: () => bulkheadOf(C) },
  loose: { name: `bulkhead ${3 * C}`, build: () => bulkheadOf(3 * C) },
};

let unloaded: OverloadRunResult;
const runs = {} as Record<keyof typeof LIMITS, OverloadRunResult>;

describe(`${CLIENTS} closed-loop clients against ${C} workers of ${SERVICE_MS} ms over loopback HTTP`, () => {
  beforeAll(async () => {
    unloaded = await unloadedRun(SERVER, UNLOADED_MS, DEADLINE_MS);
    for (const [key, limit] of Object.entries(LIMITS)) {
      runs[key as keyof typeof LIMITS] = await overloadRun({
        server: SERVER,
        clients: CLIENTS,
        warmupMs: WARMUP_MS,
        durationMs: WINDOW_MS,
        deadlineMs: DEADLINE_MS,
        ...limit.build(),
      });
    }
    const rows = Object.entries(LIMITS).map(([key, { name }]) => ({
      name,
      run: runs[key as keyof typeof LIMITS],
    }));
    console.log(
      `Goodput: answers within ${DEADLINE_MS} ms; capacity ${CAPACITY}/s.\n${overloadTable(unloaded, rows)}`,
    );
  }, 120_000);

  it('the unloaded baseline: one call at a time, each served at once', () => {
    expect(unloaded.server.maxInFlight).toBe(1);
    expect(unloaded.answered).toBeGreaterThan(0);
    expect(unloaded).toMatchObject({ refused: 0, failed: 0 });
  });

  it('no limit: the work piles up at the server, p99 far above 2 x unloaded, no answer within the deadline', () => {
    const run = runs.none;
    expect(run.server.inFlightMedian).toBeGreaterThanOrEqual(3 * C);
    expect(run.p99).toBeGreaterThan(2 * unloaded.p99);
    expect(run.p50).toBeGreaterThanOrEqual(3 * SERVICE_MS);
    expect(run.goodput).toBeLessThan(0.1 * CAPACITY);
    expect(run).toMatchObject({ refused: 0, failed: 0 });
  });

  it(`bulkhead ${C}: never more than C requests at the server, p99 within 2 x unloaded, goodput kept`, () => {
    const run = runs.tuned;
    expect(run.server.maxInFlight).toBeLessThanOrEqual(C);
    expect(run.p99).toBeLessThanOrEqual(2 * unloaded.p99);
    expect(run.goodput).toBeGreaterThan(0.5 * CAPACITY);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.failed).toBe(0);
  });

  it(`bulkhead ${3 * C}: up to 3 x C requests at the server, which queues them and triples latency`, () => {
    const run = runs.loose;
    expect(run.server.maxInFlight).toBeLessThanOrEqual(3 * C);
    expect(run.server.inFlightMedian).toBeGreaterThanOrEqual(2 * C);
    expect(run.p50).toBeGreaterThan(2 * unloaded.p50);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.failed).toBe(0);
  });
});
