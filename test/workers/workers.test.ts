/**
 * Shared policies across real worker threads: one limit and one bulkhead for the whole
 * process, exact under contention, and the permits of a thread that exits given back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedManualClock } from '../../src/testing/index.js';
import { SharedBulkhead, SharedRateLimiter } from '../../src/workers/index.js';
import {
  type BuiltEntries,
  buildWorkerEntries,
  startTask,
  type TaskWorker,
} from '../support/workerTasks.js';

let lib: BuiltEntries;
const started: TaskWorker<unknown>[] = [];

function start<R = Record<string, unknown>>(task: string, data: Record<string, unknown>) {
  const t = startTask<R>(lib, task, data);
  started.push(t as TaskWorker<unknown>);
  return t;
}

beforeAll(async () => {
  lib = await buildWorkerEntries('workers');
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((t) => t.worker.terminate()));
});

describe('a shared rate limiter across worker threads', () => {
  it('4 workers hammering 1,000/s (burst 1) for 10 s of a shared manual clock admit exactly 10,001: one per interval, never two', async () => {
    const clock = new SharedManualClock();
    const limiter = new SharedRateLimiter({ limit: 1_000, period: 1_000, burst: 1, clock });
    // [0]: admissions, [1]: stop.
    const counts = new SharedArrayBuffer(8);
    const data = { limiter: limiter.state, clock: clock.state, counts };
    const hammers = [0, 1, 2, 3].map(() => start<{ admitted: number }>('limit-manual', data));
    const driver = start<{ now: number; admitted: number }>('drive', {
      ...data,
      slots: 10_000,
      intervalMs: 1,
    });
    const driven = await driver.result;
    const admitted = (await Promise.all(hammers.map((h) => h.result))).map((r) => r.admitted);
    expect(driven).toMatchObject({ now: 10_000, admitted: 10_001 });
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(10_001);
    // The limiter in this thread sees the same state: the next permit is 1 ms away.
    expect(limiter.tryAcquire()).toBe(1);
  }, 180_000);

  it('4 workers on the real clock admit no more than the GCRA bound of the time they ran, together', async () => {
    const limiter = new SharedRateLimiter({ limit: 1_000, period: 1_000, burst: 1 });
    const go = new SharedArrayBuffer(4);
    const runs = [0, 1, 2, 3].map(() =>
      start<{ admitted: number; calls: number }>('limit-real', {
        limiter: limiter.state,
        go,
        ms: 1_000,
      }),
    );
    // Every worker has loaded the library and built its limiter before the clock starts.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const began = performance.now();
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const results = await Promise.all(runs.map((r) => r.result));
    const elapsed = performance.now() - began;
    const admitted = results.reduce((a, r) => a + r.admitted, 0);
    // Each admission read the clock between `began` and now: one per ms plus the burst,
    // whatever the machine let each worker do (per-thread limiters would admit four times it).
    expect(admitted).toBeLessThanOrEqual(Math.floor(elapsed) + 1);
    expect(admitted).toBeGreaterThan(0);
  }, 60_000);
});

describe('a shared bulkhead across worker threads', () => {
  it('4 workers × 1,000,000 contended admissions and releases: never past the limit, every count back to 0', async () => {
    const max = 3;
    const bulkhead = new SharedBulkhead({ maxConcurrent: max });
    const occupancy = new SharedArrayBuffer(4);
    const n = 1_000_000;
    const runs = [0, 1, 2, 3].map(() =>
      start<{ admitted: number; refused: number; over: number; heldHere: number }>('churn', {
        bulkhead: bulkhead.state,
        occupancy,
        n,
        max,
      }),
    );
    const results = await Promise.all(runs.map((r) => r.result));
    for (const r of results) {
      expect(r.over).toBe(0);
      expect(r.heldHere).toBe(0);
      expect(r.admitted + r.refused).toBe(n);
    }
    expect(results.reduce((a, r) => a + r.admitted, 0)).toBeGreaterThan(0);
    expect(bulkhead.inFlight).toBe(0);
    expect(Atomics.load(new Int32Array(occupancy), 0)).toBe(0);
    // Every slot's count is back to 0 too: the process can take all its permits again.
    for (let i = 0; i < max; i++) expect(bulkhead.admit(0)).toBe(0);
    expect(bulkhead.admit(0)).toBe(-1);
  }, 120_000);

  it.each([
    ['terminated', false],
    ['crashed', true],
  ])(
    'a worker %s while holding permits gives them back as it exits, and its slot is free again',
    async (_how, crash) => {
      const bulkhead = new SharedBulkhead({ maxConcurrent: 10, slots: 2 });
      const holder = start('hold', { bulkhead: bulkhead.state, permits: 4, crash });
      bulkhead.watch(holder.worker);
      expect(await holder.next((m) => m.holding !== undefined)).toMatchObject({ holding: 4 });
      expect(bulkhead.inFlight).toBe(4);
      const exited = new Promise((resolve) => holder.worker.once('exit', resolve));
      if (!crash) await holder.worker.terminate();
      await exited;
      // The reclaim ran in the exit event, before this listener: no waiting, no timer.
      expect(bulkhead.inFlight).toBe(0);
      // Its slot is free: a new worker claims it (there are 2, this thread owns the other).
      const next = start('hold', { bulkhead: bulkhead.state, permits: 10, crash: false });
      expect(await next.next((m) => m.holding !== undefined)).toMatchObject({ holding: 10 });
      expect(bulkhead.inFlight).toBe(10);
    },
    60_000,
  );
});

describe('stress: random interleavings from several workers, invariants at quiescence', () => {
  it.each([1, 2, 3])(
    'seed set %i: the permits held in the process are those the workers count as theirs, and go back to 0',
    async (set) => {
      const max = 5;
      const bulkhead = new SharedBulkhead({ maxConcurrent: max });
      const limiter = new SharedRateLimiter({ limit: 100, period: 1_000, burst: 10 });
      const occupancy = new SharedArrayBuffer(4);
      const runs = [0, 1, 2, 3].map((i) =>
        start<{ heldHere: number; admitted: number }>('stress', {
          bulkhead: bulkhead.state,
          limiter: limiter.state,
          occupancy,
          seed: set * 100 + i,
          steps: 200_000,
          max,
        }),
      );
      const quiet = (await Promise.all(runs.map((r) => r.next((m) => m.quiescent === true)))) as {
        held: number;
        heldHere: number;
        over: number;
        limited: number;
      }[];
      const held = quiet.reduce((a, q) => a + q.held, 0);
      for (const q of quiet) {
        expect(q.over).toBe(0);
        expect(q.heldHere).toBe(q.held);
      }
      expect(bulkhead.inFlight).toBe(held);
      expect(held).toBeLessThanOrEqual(max);
      // The limiter took part in the interleavings.
      expect(quiet.reduce((a, q) => a + q.limited, 0)).toBeGreaterThan(0);
      for (const r of runs) r.worker.postMessage('release');
      const ends = await Promise.all(runs.map((r) => r.result));
      for (const e of ends) expect(e.heldHere).toBe(0);
      expect(bulkhead.inFlight).toBe(0);
    },
    120_000,
  );

  it('workers terminated at random moments of their run leave a count equal to what the survivors hold', async () => {
    const max = 6;
    const bulkhead = new SharedBulkhead({ maxConcurrent: max });
    const limiter = new SharedRateLimiter({ limit: 100, period: 1_000 });
    const occupancy = new SharedArrayBuffer(4);
    const runs = [0, 1, 2, 3].map((i) =>
      start<{ heldHere: number }>('stress', {
        bulkhead: bulkhead.state,
        limiter: limiter.state,
        occupancy,
        seed: 900 + i,
        steps: 2_000_000,
        max,
      }),
    );
    for (const r of runs) bulkhead.watch(r.worker);
    // Two are stopped part way through their operations (their own counts of what they hold
    // die with them), two run to the end.
    await runs[0]!.next((m) => m.quiescent === true);
    // `terminate()` may settle before the `exit` event in which the permits are reclaimed.
    const exits = [runs[2]!, runs[3]!].map(
      (r) => new Promise((resolve) => r.worker.once('exit', resolve)),
    );
    await Promise.all([runs[2]!.worker.terminate(), runs[3]!.worker.terminate(), ...exits]);
    const quiet = (await runs[1]!.next((m) => m.quiescent === true)) as { held: number };
    const first = runs[0]!.messages.find((m) => m.quiescent === true) as { held: number };
    expect(bulkhead.inFlight).toBe(first.held + quiet.held);
    for (const r of [runs[0]!, runs[1]!]) r.worker.postMessage('release');
    await Promise.all([runs[0]!.result, runs[1]!.result]);
    expect(bulkhead.inFlight).toBe(0);
  }, 120_000);
});
