// @ts-check
/**
 * The portable smoke suite: the same checks on every runtime the package claims (Node, Bun,
 * Deno, workerd, a browser). Plain ES module with no runtime-specific API, against the BUILT
 * package loaded by its name, so each runtime resolves `breakwater` its own way. Time is the
 * manual clock's: no check depends on how fast the runtime is.
 */
import {
  adaptiveLimit,
  BulkheadRejectedError,
  bulkhead,
  circuitBreaker,
  hedge,
  isPolicyRejection,
  pipeline,
  rateLimiter,
  retry,
  retryBudget,
  TimeoutError,
  timeout,
  VERSION,
} from 'breakwater';
import { flushMicrotasks, ManualClock } from 'breakwater/testing';

/**
 * @param {unknown} condition
 * @param {string} what
 * @returns {asserts condition}
 */
function check(condition, what) {
  if (!condition) throw new Error(what);
}

/**
 * @param {unknown} actual
 * @param {unknown} expected
 * @param {string} what
 */
function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

/**
 * Watches a promise without awaiting it, so a check can look at whether it settled yet.
 * @template T
 * @param {Promise<T>} promise
 */
function watch(promise) {
  /** @type {{ settled: boolean, ok?: boolean, value?: T, error?: unknown }} */
  const state = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, ok: true, value }),
    (error) => Object.assign(state, { settled: true, ok: false, error }),
  );
  return state;
}

/** A promise that settles only when `signal` aborts, rejecting with its reason. */
function stuck(/** @type {AbortSignal} */ signal) {
  return new Promise((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** @type {[name: string, run: () => Promise<void> | void][]} */
export const checks = [
  [
    'the package loads and names its version',
    () => {
      check(typeof VERSION === 'string' && /^\d+\.\d+\.\d+/.test(VERSION), `VERSION ${VERSION}`);
    },
  ],
  [
    'ManualClock fires due timers in time order and no others',
    () => {
      const clock = new ManualClock();
      /** @type {string[]} */
      const fired = [];
      clock.setTimer(() => fired.push('b@200'), 200);
      clock.setTimer(() => fired.push('a@100'), 100);
      clock.setTimer(() => fired.push('c@300'), 300);
      clock.advance(99);
      equal(fired, [], 'before the first is due');
      clock.advance(101);
      equal(fired, ['a@100', 'b@200'], 'at 200 ms');
      equal(clock.now(), 200, 'clock.now()');
    },
  ],
  [
    'retry: two failures then a success, each retry after its delay',
    async () => {
      const clock = new ManualClock();
      let calls = 0;
      const p = pipeline(
        retry({ maxAttempts: 3, delay: 100, backoff: 'constant', jitter: 'none', clock }),
      );
      const call = watch(
        p.execute(async () => {
          calls++;
          if (calls < 3) throw new Error(`failure ${calls}`);
          return 'ok';
        }),
      );
      await flushMicrotasks();
      equal(calls, 1, 'calls at 0 ms');
      await clock.advanceAsync(99);
      equal(calls, 1, 'calls at 99 ms');
      await clock.advanceAsync(1);
      equal(calls, 2, 'calls at 100 ms');
      await clock.advanceAsync(100);
      await flushMicrotasks();
      equal(calls, 3, 'calls at 200 ms');
      equal([call.settled, call.value], [true, 'ok'], 'the call');
    },
  ],
  [
    'retry budget: the budget, not maxAttempts, caps the retries',
    async () => {
      const clock = new ManualClock();
      const budget = retryBudget({ minRetriesPerSecond: 0, clock });
      const p = pipeline(retry({ maxAttempts: 4, delay: 1, jitter: 'none', budget, clock }));
      let attempts = 0;
      for (let i = 0; i < 10; i++) {
        const call = watch(
          p.execute(() => {
            attempts++;
            return Promise.reject(new Error('503'));
          }),
        );
        while (!call.settled) await clock.advanceAsync(1);
        equal(call.ok, false, `call ${i} succeeded`);
      }
      // 20 % of 10 calls: two retries in all where maxAttempts would make 30; every call ends
      // at a refused retry.
      equal(budget.stats().allowed, 2, 'retries allowed');
      equal(budget.stats().refused, 10, 'retries refused');
      equal(attempts, 12, 'attempts');
    },
  ],
  [
    'circuit breaker: opens, refuses, half-opens after its break, closes on a probe',
    async () => {
      const clock = new ManualClock();
      const breaker = circuitBreaker({
        clock,
        breakDuration: 5_000,
        window: { kind: 'consecutive', threshold: 2 },
      });
      const p = pipeline(breaker);
      for (let i = 0; i < 2; i++) {
        const r = await p.tryExecute(() => Promise.reject(new Error('down')));
        check(!r.ok && !r.rejected, `failure ${i} reached the function`);
      }
      equal(breaker.state, 'open', 'after two failures');
      let ran = false;
      const refused = await p.tryExecute(() => {
        ran = true;
        return 'never';
      });
      check(!refused.ok && refused.rejected && isPolicyRejection(refused.error), 'refused');
      equal(ran, false, 'the refused call ran');
      clock.advance(4_999);
      equal(breaker.state, 'open', 'at 4999 ms');
      clock.advance(1);
      equal(breaker.state, 'half-open', 'at 5000 ms');
      equal(await p.execute(() => 'probe'), 'probe', 'the probe');
      equal(breaker.state, 'closed', 'after the probe');
    },
  ],
  [
    'timeout: rejects at its deadline and aborts the signal',
    async () => {
      const clock = new ManualClock();
      /** @type {AbortSignal | undefined} */
      let seen;
      const call = watch(
        pipeline(timeout({ timeout: 1_000, clock })).execute(({ signal }) => {
          seen = signal;
          return stuck(signal);
        }),
      );
      await clock.advanceAsync(999);
      equal(call.settled, false, 'settled at 999 ms');
      await clock.advanceAsync(1);
      await flushMicrotasks();
      check(call.settled && call.error instanceof TimeoutError, `at 1000 ms: ${call.error}`);
      equal(seen?.aborted, true, 'signal aborted');
    },
  ],
  [
    'bulkhead: runs two, queues one, refuses the fourth, hands the slot on',
    async () => {
      const b = bulkhead({ maxConcurrent: 2, maxQueue: 1 });
      const p = pipeline(b);
      /** @type {(() => void)[]} */
      const release = [];
      const run = (/** @type {string} */ name) =>
        watch(p.execute(() => new Promise((resolve) => release.push(() => resolve(name)))));
      const calls = [run('a'), run('b'), run('c'), run('d')];
      await flushMicrotasks();
      equal(release.length, 2, 'running');
      const fourth = calls[3];
      check(fourth.error instanceof BulkheadRejectedError, `fourth: ${fourth.error}`);
      equal(fourth.error.reason, 'full', 'its reason');
      release[0]();
      await flushMicrotasks();
      equal(release.length, 3, 'running after the first ended');
      release[1]();
      release[2]();
      await flushMicrotasks();
      equal(
        calls.slice(0, 3).map((c) => c.value),
        ['a', 'b', 'c'],
        'values',
      );
      equal([b.inFlight, b.queueLength], [0, 0], 'in flight and queued at the end');
    },
  ],
  [
    'rate limiter: a burst of its limit, then one per interval',
    () => {
      const clock = new ManualClock();
      const limiter = rateLimiter({ limit: 2, period: 1_000, clock });
      equal([limiter.tryAcquire(), limiter.tryAcquire()], [0, 0], 'the burst');
      equal(limiter.tryAcquire(), 500, 'the third waits');
      clock.advance(499);
      check(limiter.tryAcquire() > 0, 'free at 499 ms');
      clock.advance(1);
      equal(limiter.tryAcquire(), 0, 'at 500 ms');
    },
  ],
  [
    'hedge: a stuck attempt is hedged after its delay and the hedge wins',
    async () => {
      const clock = new ManualClock();
      const h = hedge({ delay: 50, clock });
      /** @type {AbortSignal[]} */
      const signals = [];
      const call = watch(
        pipeline(h).execute(({ hedge: n, signal }) => {
          signals.push(signal);
          return n === 0 ? stuck(signal) : Promise.resolve(`from attempt ${n}`);
        }),
      );
      await clock.advanceAsync(49);
      equal(signals.length, 1, 'attempts at 49 ms');
      await clock.advanceAsync(1);
      await flushMicrotasks();
      equal([call.settled, call.value], [true, 'from attempt 1'], 'the call');
      equal(h.stats().won, 1, 'hedges won');
      equal(signals[0].aborted, true, 'the losing attempt was aborted');
    },
  ],
  [
    'adaptive limit: drops cut the limit, permits all come back',
    async () => {
      const clock = new ManualClock();
      const limit = adaptiveLimit({
        clock,
        algorithm: 'aimd',
        initialLimit: 10,
        minSamples: 5,
        handleResult: (/** @type {string} */ r) => r === 'dropped',
      });
      const p = pipeline(limit);
      for (let i = 0; i < 40; i++) {
        await p.execute(() => 'dropped');
        clock.advance(100);
      }
      check(limit.limit < 10, `the limit after drops: ${limit.limit}`);
      equal(limit.inFlight, 0, 'in flight at the end');
    },
  ],
];

/**
 * Runs every check in order, each to the end whatever the others did.
 * @returns {Promise<{ passed: number, failed: number, failures: string[] }>}
 */
export async function runChecks() {
  /** @type {string[]} */
  const failures = [];
  for (const [name, run] of checks) {
    try {
      await run();
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { passed: checks.length - failures.length, failed: failures.length, failures };
}
