/**
 * Async interleavings chosen by fast-check's scheduler: when each target settles, when each
 * call starts, when the caller aborts and when the manual clock moves are all scheduled tasks
 * released in an order fast-check picks (and shrinks on failure).
 *
 * A clock tick first lets every pending promise continuation run (the scheduler waits for a
 * macrotask), then advances with `advanceAsync`, which lets continuations run between timers:
 * real timers never fire in the middle of a chain of continuations. Targets and caller aborts
 * may land anywhere.
 */
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  type ExecutionContext,
  Hedge,
  isPolicyRejection,
  type Pipeline,
  pipeline,
  Retry,
  Timeout,
  TimeoutError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { macrotask } from '../support/async.js';
import { concurrencyBudget } from '../support/budget.js';
import { recordUnhandledRejections } from '../support/rejections.js';

const RUNS = 200;

const unhandled = recordUnhandledRejections();

type Method = 'execute' | 'tryExecute';

/** What became of one call. */
class Call {
  settlements = 0;
  status: 'pending' | 'fulfilled' | 'rejected' = 'pending';
  value: unknown = undefined;
  reason: unknown = undefined;
  /** tryExecute's `rejected` flag. */
  refusedFlag: boolean | undefined = undefined;
  /** tryExecute rejected: must never happen. */
  tryRejected = false;
  readonly attempts: number[] = [];
  readonly controller = new AbortController();
  readonly abortReason: Error;
  aborted = false;

  constructor(readonly id: number) {
    this.abortReason = new Error(`abort c${id}`);
  }

  settle(status: 'fulfilled' | 'rejected', result: unknown): void {
    this.settlements++;
    this.status = status;
    if (status === 'fulfilled') this.value = result;
    else this.reason = result;
  }

  abort(): void {
    this.aborted = true;
    this.controller.abort(this.abortReason);
  }
}

function launch(
  p: Pipeline,
  method: Method,
  call: Call,
  fn: (context: ExecutionContext) => unknown,
  withSignal: boolean,
): void {
  const options = withSignal ? { signal: call.controller.signal } : undefined;
  if (method === 'execute') {
    p.execute(fn, options).then(
      (value) => call.settle('fulfilled', value),
      (reason) => call.settle('rejected', reason),
    );
    return;
  }
  p.tryExecute(fn, options).then(
    (r) => {
      if (r.ok) call.settle('fulfilled', r.value);
      else {
        call.refusedFlag = r.rejected;
        call.settle('rejected', r.error);
      }
    },
    (reason) => {
      call.tryRejected = true;
      call.settle('rejected', reason);
    },
  );
}

/** The scheduler, a manual clock, and work whose settlement the scheduler releases. */
class Harness {
  readonly clock = new ManualClock();
  running = 0;
  peakRunning = 0;
  readonly violations: string[] = [];
  private readonly release: (label: string) => Promise<string>;

  constructor(readonly s: fc.Scheduler) {
    this.release = s.scheduleFunction(async function release(label: string) {
      return label;
    });
  }

  /**
   * Work released by the scheduler. `observe` is attached to the very promise handed to the
   * pipeline, before the pipeline attaches its own handlers, so it runs right before the
   * pipeline sees the outcome (nothing can run in between).
   */
  work(label: string, fail: boolean, observe?: (ok: boolean) => void): Promise<string> {
    this.running++;
    this.peakRunning = Math.max(this.peakRunning, this.running);
    const p = this.release(label).then(() => {
      this.running--;
      if (fail) throw new Error(`failed ${label}`);
      return `value ${label}`;
    });
    if (observe !== undefined) {
      p.then(
        () => observe(true),
        () => observe(false),
      );
    }
    return p;
  }

  /** Runs `action` when the scheduler releases it. */
  later(label: string, action: () => void): void {
    this.s.schedule(Promise.resolve(label), label).then(action);
  }

  ticks(list: readonly number[]): void {
    list.forEach((ms, k) => {
      // The scheduler awaits this act before it releases anything else.
      const act = async (release: () => Promise<void>): Promise<void> => {
        await macrotask();
        await this.clock.advanceAsync(ms);
        await release();
      };
      this.s.schedule(Promise.resolve(ms), `tick ${k} +${ms}ms`, undefined, act);
    });
  }

  check(ok: boolean, message: string): void {
    if (!ok) this.violations.push(message);
  }

  /**
   * Starts each call with `start` (when the scheduler releases it, for a delayed one), has the
   * scheduler abort those that abort (by `abort`), ticks the clock by `ticks`, runs everything
   * to its end and checks that it ended cleanly.
   */
  async play(
    calls: readonly Call[],
    specs: readonly { delayed: boolean; abort?: boolean }[],
    start: (i: number) => void,
    ticks: readonly number[] = [],
    abort: (i: number) => void = (i) => calls[i]!.abort(),
  ): Promise<void> {
    specs.forEach((spec, i) => {
      if (spec.delayed) this.later(`start c${i}`, () => start(i));
      else start(i);
      if (spec.abort) this.later(`abort c${i}`, () => abort(i));
    });
    this.ticks(ticks);
    await this.drain();
    await expectCleanEnd(this, calls);
  }

  /** Releases every task and fires every timer until neither is left. */
  async drain(): Promise<void> {
    for (let round = 0; round < 500; round++) {
      await this.s.waitIdle();
      await this.clock.runAll();
      await flushMicrotasks();
      if (this.s.count() === 0 && this.clock.pendingTimers === 0) {
        await macrotask();
        if (this.s.count() === 0 && this.clock.pendingTimers === 0) return;
      }
    }
    throw new Error('the scheduler and the clock never went idle');
  }
}

async function expectCleanEnd(h: Harness, calls: readonly Call[]): Promise<void> {
  await macrotask();
  expect(h.violations).toEqual([]);
  for (const call of calls) {
    expect(call.settlements, `settlements of c${call.id}`).toBe(1);
    expect(call.tryRejected, `tryExecute of c${call.id} rejected`).toBe(false);
    expect(getEventListeners(call.controller.signal, 'abort'), `listeners of c${call.id}`).toEqual(
      [],
    );
  }
  expect(h.clock.pendingTimers).toBe(0);
  expect(unhandled).toEqual([]);
}

const ticksArb = fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 10 });

/** 1 to `maxLength` calls: how their attempts fail, whether each starts late and is aborted. */
const callsArb = <F>(fails: fc.Arbitrary<F>, maxLength: number) =>
  fc.array(fc.record({ fails, delayed: fc.boolean(), abort: fc.boolean() }), {
    minLength: 1,
    maxLength,
  });
const methodArb = fc.constantFrom<Method>('execute', 'tryExecute');

describe('bulkhead without a queue', () => {
  it('admits at most maxConcurrent, refuses exactly the calls that find it full, settles every call once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        methodArb,
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ fails: fc.boolean(), delayed: fc.boolean() }), {
          minLength: 1,
          maxLength: 10,
        }),
        async (s, method, withSignal, max, specs) => {
          const h = new Harness(s);
          const pool = new Bulkhead({ maxConcurrent: max, clock: h.clock });
          const p = pipeline(pool);
          const calls = specs.map((_, i) => new Call(i));
          const refusedAtStart: boolean[] = [];
          const start = (i: number): void => {
            refusedAtStart[i] = pool.inFlight >= max;
            launch(
              p,
              method,
              calls[i]!,
              ({ attempt }) => {
                calls[i]!.attempts.push(attempt);
                h.check(pool.inFlight <= max, `inFlight ${pool.inFlight} > ${max}`);
                return h.work(`c${i}`, specs[i]!.fails);
              },
              withSignal,
            );
          };
          await h.play(calls, specs, start);
          expect(h.peakRunning).toBeLessThanOrEqual(max);
          expect(pool.inFlight).toBe(0);
          calls.forEach((call, i) => {
            if (refusedAtStart[i]) {
              expect(call.attempts).toEqual([]);
              expect(call.reason).toBeInstanceOf(BulkheadRejectedError);
              expect(call.reason).toMatchObject({ reason: 'full' });
              if (method === 'tryExecute') expect(call.refusedFlag).toBe(true);
            } else {
              expect(call.attempts).toEqual([1]);
              if (specs[i]!.fails) {
                expect(call.reason).toMatchObject({ message: `failed c${i}` });
                if (method === 'tryExecute') expect(call.refusedFlag).toBe(false);
              } else expect(call.value).toBe(`value c${i}`);
            }
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('bulkhead with a queue', () => {
  it('never exceeds maxConcurrent or maxQueue, admits queued calls in FIFO order, and every call settles once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        methodArb,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
        callsArb(fc.boolean(), 10),
        ticksArb,
        async (s, method, max, maxQueue, queueTimeout, specs, ticks) => {
          const h = new Harness(s);
          const pool = new Bulkhead({
            maxConcurrent: max,
            maxQueue,
            queueTimeout: queueTimeout ?? Number.POSITIVE_INFINITY,
            clock: h.clock,
          });
          const p = pipeline(pool);
          const calls = specs.map((_, i) => new Call(i));
          const fate: ('admitted' | 'queued' | 'refused' | 'aborted')[] = [];
          const enqueued: number[] = [];
          const startOrder: number[] = [];
          const start = (i: number): void => {
            const call = calls[i]!;
            fate[i] = call.aborted
              ? 'aborted'
              : pool.inFlight < max
                ? 'admitted'
                : pool.queueLength < maxQueue
                  ? 'queued'
                  : 'refused';
            if (fate[i] === 'queued') enqueued.push(i);
            launch(
              p,
              method,
              call,
              ({ attempt, signal }) => {
                call.attempts.push(attempt);
                startOrder.push(i);
                h.check(!signal.aborted, `c${i} started after its caller aborted`);
                h.check(pool.inFlight <= max, `inFlight ${pool.inFlight} > ${max}`);
                return h.work(`c${i}`, specs[i]!.fails);
              },
              true,
            );
            h.check(pool.queueLength <= maxQueue, `queueLength ${pool.queueLength}`);
          };
          await h.play(calls, specs, start, ticks);
          expect(h.peakRunning).toBeLessThanOrEqual(max);
          expect(pool.inFlight).toBe(0);
          expect(pool.queueLength).toBe(0);
          // Queued calls start in the order they were queued (those that left are skipped).
          const queuedStarts = startOrder.filter((i) => fate[i] === 'queued');
          expect(queuedStarts).toEqual(enqueued.filter((i) => queuedStarts.includes(i)));
          calls.forEach((call, i) => {
            const started = call.attempts.length === 1;
            switch (fate[i]) {
              case 'aborted':
                expect(call.attempts).toEqual([]);
                expect(call.reason).toBe(call.abortReason);
                return;
              case 'refused':
                expect(call.attempts).toEqual([]);
                expect(call.reason).toMatchObject({ reason: 'full' });
                return;
              case 'queued':
                if (!started) {
                  if (call.reason === call.abortReason) expect(call.aborted).toBe(true);
                  else {
                    expect(call.reason).toBeInstanceOf(BulkheadRejectedError);
                    expect(call.reason).toMatchObject({ reason: 'queue-timeout' });
                    expect(queueTimeout).toBeDefined();
                    if (method === 'tryExecute') expect(call.refusedFlag).toBe(true);
                  }
                  return;
                }
                break;
              default:
                expect(started).toBe(true);
            }
            // Once started, a call ends as its work does: nothing here aborts work in flight.
            if (specs[i]!.fails) expect(call.reason).toMatchObject({ message: `failed c${i}` });
            else expect(call.value).toBe(`value c${i}`);
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('bulkhead with a lifo or codel queue', () => {
  it.each(['lifo', 'codel'] as const)(
    '%s: never exceeds maxConcurrent or maxQueue, every call settles once, nothing is left behind',
    async (queue) => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          methodArb,
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 3 }),
          fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
          callsArb(fc.boolean(), 10),
          ticksArb,
          async (s, method, max, maxQueue, queueTimeout, specs, ticks) => {
            const h = new Harness(s);
            const pool = new Bulkhead({
              maxConcurrent: max,
              maxQueue,
              queueTimeout: queueTimeout ?? Number.POSITIVE_INFINITY,
              queue,
              ...(queue === 'codel' ? { codelTarget: 3, codelInterval: 10 } : {}),
              clock: h.clock,
            });
            const p = pipeline(pool);
            const calls = specs.map((_, i) => new Call(i));
            const start = (i: number): void => {
              const call = calls[i]!;
              const queuedAt = h.clock.now();
              launch(
                p,
                method,
                call,
                ({ attempt, signal }) => {
                  call.attempts.push(attempt);
                  const waited = h.clock.now() - queuedAt;
                  h.check(!signal.aborted, `c${i} started after its caller aborted`);
                  h.check(pool.inFlight <= max, `inFlight ${pool.inFlight} > ${max}`);
                  if (queue === 'codel') h.check(waited <= 10, `c${i} waited ${waited} ms`);
                  return h.work(`c${i}`, specs[i]!.fails);
                },
                true,
              );
              h.check(pool.queueLength <= maxQueue, `queueLength ${pool.queueLength}`);
            };
            await h.play(calls, specs, start, ticks);
            expect(h.peakRunning).toBeLessThanOrEqual(max);
            expect(pool.inFlight).toBe(0);
            expect(pool.queueLength).toBe(0);
            const reasons = ['full', 'queue-timeout', ...(queue === 'codel' ? ['codel'] : [])];
            calls.forEach((call, i) => {
              if (call.attempts.length === 0) {
                if (call.reason === call.abortReason) expect(call.aborted).toBe(true);
                else {
                  expect(call.reason).toBeInstanceOf(BulkheadRejectedError);
                  expect(reasons).toContain((call.reason as BulkheadRejectedError).reason);
                }
                return;
              }
              expect(call.attempts).toEqual([1]);
              if (specs[i]!.fails) expect(call.reason).toMatchObject({ message: `failed c${i}` });
              else expect(call.value).toBe(`value c${i}`);
            });
          },
        ),
        { numRuns: RUNS },
      );
    },
  );
});

describe('retry', () => {
  it('settles every call once with its last attempt or its abort reason, never over maxAttempts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        methodArb,
        fc.record({
          maxAttempts: fc.integer({ min: 1, max: 4 }),
          backoff: fc.constantFrom(
            'constant' as const,
            'linear' as const,
            'exponential' as const,
            'decorrelated' as const,
          ),
          jitter: fc.constantFrom(
            'none' as const,
            'full' as const,
            'equal' as const,
            'decorrelated' as const,
          ),
          delay: fc.integer({ min: 0, max: 20 }),
          random: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        }),
        callsArb(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), 6),
        ticksArb,
        async (s, method, o, specs, ticks) => {
          const h = new Harness(s);
          const policy = new Retry({
            maxAttempts: o.maxAttempts,
            backoff: o.backoff,
            jitter: o.jitter,
            delay: o.delay,
            random: () => o.random,
            clock: h.clock,
          });
          let retries = 0;
          policy.onRetry(() => retries++);
          const p = pipeline(policy);
          const calls = specs.map((_, i) => new Call(i));
          const abortedBeforeStart: boolean[] = [];
          const start = (i: number): void => {
            const call = calls[i]!;
            abortedBeforeStart[i] = call.aborted;
            launch(
              p,
              method,
              call,
              ({ attempt, signal }) => {
                call.attempts.push(attempt);
                h.check(attempt === call.attempts.length, `c${i} attempt ${attempt}`);
                h.check(!signal.aborted, `c${i} attempt ${attempt} started after its abort`);
                return h.work(`c${i}a${attempt}`, specs[i]!.fails[attempt - 1]!);
              },
              true,
            );
          };
          await h.play(calls, specs, start, ticks);
          let minRetries = 0;
          let maxRetries = 0;
          calls.forEach((call, i) => {
            const k = call.attempts.length;
            expect(k).toBeLessThanOrEqual(o.maxAttempts);
            minRetries += Math.max(0, k - 1);
            maxRetries += Math.max(0, k - 1) + (call.aborted ? 1 : 0);
            if (abortedBeforeStart[i]) {
              expect(k).toBe(0);
              expect(call.reason).toBe(call.abortReason);
              return;
            }
            expect(k).toBeGreaterThan(0);
            // Every attempt before the last failed.
            for (let a = 0; a < k - 1; a++) expect(specs[i]!.fails[a]).toBe(true);
            const lastFailed = specs[i]!.fails[k - 1]!;
            if (call.status === 'fulfilled') {
              expect(lastFailed).toBe(false);
              expect(call.value).toBe(`value c${i}a${k}`);
            } else if (call.reason === call.abortReason) {
              expect(call.aborted).toBe(true);
              expect(lastFailed).toBe(true);
            } else {
              expect(lastFailed).toBe(true);
              expect(call.reason).toMatchObject({ message: `failed c${i}a${k}` });
              if (!call.aborted) expect(k).toBe(o.maxAttempts);
              if (method === 'tryExecute') expect(call.refusedFlag).toBe(false);
            }
          });
          expect(retries).toBeGreaterThanOrEqual(minRetries);
          expect(retries).toBeLessThanOrEqual(maxRetries);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('timeout', () => {
  it.each(['cooperative', 'aggressive'] as const)(
    '%s: each call ends as its work, its deadline and its caller abort dictate, once',
    async (strategy) => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          methodArb,
          fc.integer({ min: 5, max: 60 }),
          callsArb(fc.boolean(), 8),
          ticksArb,
          async (s, method, ms, specs, ticks) => {
            const h = new Harness(s);
            const policy = new Timeout({ timeout: ms, strategy, clock: h.clock });
            const p = pipeline(policy);
            const calls = specs.map((_, i) => new Call(i));
            interface Seen {
              start?: number;
              settledAt?: number;
              signal?: AbortSignal;
              reasonAtSettle?: unknown;
              abortAt?: number;
              abortWhileRunning?: boolean;
            }
            const seen: Seen[] = specs.map(() => ({}));
            const start = (i: number): void => {
              const call = calls[i]!;
              launch(
                p,
                method,
                call,
                ({ signal }) => {
                  const w = seen[i]!;
                  w.start = h.clock.now();
                  w.signal = signal;
                  h.check(!signal.aborted, `c${i} started with an aborted signal`);
                  return h.work(`c${i}`, specs[i]!.fails, () => {
                    w.settledAt = h.clock.now();
                    w.reasonAtSettle = signal.aborted ? signal.reason : undefined;
                  });
                },
                true,
              );
            };
            await h.play(calls, specs, start, ticks, (i) => {
              const w = seen[i]!;
              w.abortAt = h.clock.now();
              w.abortWhileRunning = w.start !== undefined && w.settledAt === undefined;
              calls[i]!.abort();
            });
            expect(policy.pending).toBe(0);
            calls.forEach((call, i) => {
              const w = seen[i]!;
              if (w.start === undefined) {
                expect(call.aborted).toBe(true);
                expect(call.reason).toBe(call.abortReason);
                return;
              }
              const deadline = w.start + ms;
              const deadlineBeforeSettle = w.settledAt! >= deadline;
              const callerFirst =
                w.abortWhileRunning === true && w.abortAt! < deadline && !deadlineBeforeSettle;
              const callerBeforeDeadline = w.abortWhileRunning === true && w.abortAt! < deadline;
              // The work's signal says who stopped it first.
              if (callerBeforeDeadline) expect(w.reasonAtSettle).toBe(call.abortReason);
              else if (deadlineBeforeSettle) expect(w.reasonAtSettle).toBeInstanceOf(TimeoutError);
              else expect(w.reasonAtSettle).toBeUndefined();

              let expected: 'value' | 'error' | 'timeout' | 'abort';
              if (strategy === 'cooperative') {
                // Once the caller has aborted, the deadline no longer applies.
                const timedOut = deadlineBeforeSettle && !callerBeforeDeadline;
                expected = !specs[i]!.fails ? 'value' : timedOut ? 'timeout' : 'error';
              } else if (callerFirst || (callerBeforeDeadline && deadlineBeforeSettle)) {
                expected = 'abort';
              } else if (deadlineBeforeSettle) {
                expected = 'timeout';
              } else {
                expected = specs[i]!.fails ? 'error' : 'value';
              }
              switch (expected) {
                case 'value':
                  expect(call.value).toBe(`value c${i}`);
                  break;
                case 'error':
                  expect(call.reason).toMatchObject({ message: `failed c${i}` });
                  break;
                case 'timeout':
                  expect(call.reason).toBeInstanceOf(TimeoutError);
                  if (method === 'tryExecute') expect(call.refusedFlag).toBe(true);
                  break;
                case 'abort':
                  expect(call.reason).toBe(call.abortReason);
                  if (method === 'tryExecute') expect(call.refusedFlag).toBe(false);
                  break;
              }
            });
          },
        ),
        { numRuns: RUNS },
      );
    },
  );
});

describe('retry + breaker + timeout + bulkhead', () => {
  it.each(['cooperative', 'aggressive'] as const)(
    '%s timeout: many concurrent calls with caller aborts all settle once, within the bulkhead limit, leaving nothing behind',
    async (strategy) => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          methodArb,
          fc.record({
            maxAttempts: fc.integer({ min: 1, max: 3 }),
            delay: fc.integer({ min: 0, max: 20 }),
            jitter: fc.constantFrom('none' as const, 'full' as const),
            threshold: fc.integer({ min: 1, max: 4 }),
            breakDuration: fc.integer({ min: 10, max: 100 }),
            timeout: fc.integer({ min: 5, max: 60 }),
            max: fc.integer({ min: 1, max: 3 }),
            maxQueue: fc.integer({ min: 0, max: 2 }),
          }),
          callsArb(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), 8),
          ticksArb,
          async (s, method, o, specs, ticks) => {
            const h = new Harness(s);
            const breaker = new CircuitBreaker({
              clock: h.clock,
              window: { kind: 'consecutive', threshold: o.threshold },
              breakDuration: o.breakDuration,
            });
            const limit = new Timeout({ timeout: o.timeout, strategy, clock: h.clock });
            const pool = new Bulkhead({
              maxConcurrent: o.max,
              maxQueue: o.maxQueue,
              clock: h.clock,
            });
            const p = pipeline(
              new Retry({
                maxAttempts: o.maxAttempts,
                delay: o.delay,
                backoff: 'exponential',
                jitter: o.jitter,
                random: () => 0.5,
                clock: h.clock,
              }),
              breaker,
              limit,
              pool,
            );
            const calls = specs.map((_, i) => new Call(i));
            const start = (i: number): void => {
              const call = calls[i]!;
              launch(
                p,
                method,
                call,
                ({ attempt, signal }) => {
                  // An attempt refused or timed out before reaching fn still counts.
                  const previous = call.attempts[call.attempts.length - 1] ?? 0;
                  h.check(attempt > previous, `c${i} attempt ${attempt} after ${previous}`);
                  call.attempts.push(attempt);
                  h.check(
                    !signal.aborted,
                    `c${i} attempt ${attempt} started at ${h.clock.now()} with a signal aborted by ${String(signal.reason)}`,
                  );
                  h.check(pool.inFlight <= o.max, `inFlight ${pool.inFlight} > ${o.max}`);
                  h.check(pool.queueLength <= o.maxQueue, `queueLength ${pool.queueLength}`);
                  return h.work(`c${i}a${attempt}`, specs[i]!.fails[attempt - 1]!);
                },
                true,
              );
            };
            await h.play(calls, specs, start, ticks);
            expect(h.peakRunning).toBeLessThanOrEqual(o.max);
            expect(pool.inFlight).toBe(0);
            expect(pool.queueLength).toBe(0);
            expect(limit.pending).toBe(0);
            if (breaker.state === 'half-open') expect(breaker.stats().probesInFlight).toBe(0);
            calls.forEach((call, i) => {
              const k = call.attempts[call.attempts.length - 1] ?? 0;
              expect(k).toBeLessThanOrEqual(o.maxAttempts);
              if (call.status === 'fulfilled') {
                expect(k).toBeGreaterThan(0);
                expect(specs[i]!.fails[k - 1]).toBe(false);
                expect(call.value).toBe(`value c${i}a${k}`);
                return;
              }
              const r = call.reason;
              if (r === call.abortReason) {
                expect(call.aborted).toBe(true);
                if (method === 'tryExecute') expect(call.refusedFlag).toBe(false);
              } else if (isPolicyRejection(r)) {
                expect(
                  r instanceof TimeoutError ||
                    r instanceof BrokenCircuitError ||
                    r instanceof BulkheadRejectedError,
                ).toBe(true);
                if (method === 'tryExecute') expect(call.refusedFlag).toBe(true);
              } else {
                const failedAttempts = call.attempts
                  .filter((a) => specs[i]!.fails[a - 1])
                  .map((a) => `failed c${i}a${a}`);
                expect(failedAttempts).toContain((r as Error).message);
                if (method === 'tryExecute') expect(call.refusedFlag).toBe(false);
              }
            });
          },
        ),
        { numRuns: RUNS },
      );
    },
  );
});

describe('hedge', () => {
  it('settles every call once with an attempt that succeeded (or a failure), aborts the losers, gives every permit and extra attempt back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        methodArb,
        fc.boolean(),
        fc.boolean(),
        callsArb(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), 5),
        ticksArb,
        async (s, method, withSignal, stepInside, specs, ticks) => {
          const h = new Harness(s);
          const budget = concurrencyBudget({ ratio: 0.5, min: 2 });
          const hedge = new Hedge({ clock: h.clock, delay: 10, maxHedges: 2, budget });
          const pool = new Bulkhead({ maxConcurrent: 100, clock: h.clock });
          const p = stepInside ? pipeline(hedge, pool) : pipeline(hedge);
          const calls = specs.map((_, i) => new Call(i));
          const signals: AbortSignal[][] = specs.map(() => []);
          /** The attempts of each call that ended before the call settled, in order. */
          const endedFirst: number[][] = specs.map(() => []);
          const start = (i: number): void =>
            launch(
              p,
              method,
              calls[i]!,
              ({ hedge: n, signal }) => {
                calls[i]!.attempts.push(n);
                signals[i]![n] = signal;
                return h.work(`c${i}a${n}`, specs[i]!.fails[n]!, () => {
                  if (calls[i]!.settlements === 0) endedFirst[i]!.push(n);
                });
              },
              withSignal,
            );
          await h.play(calls, specs, start, ticks);
          expect(pool.inFlight).toBe(0);
          expect(budget).toMatchObject({ active: 0, extra: 0 });
          expect(budget.ended).toBe(budget.granted);
          expect(budget.calls).toBe(budget.callsEnded);
          expect(hedge.pending).toBe(0);
          calls.forEach((call, i) => {
            const started = call.attempts;
            expect(started.length).toBeLessThanOrEqual(3);
            if (call.status === 'fulfilled') {
              const n = Number(/a(\d)$/.exec(String(call.value))![1]);
              expect(started).toContain(n);
              expect(specs[i]!.fails[n]).toBe(false);
              // The first to succeed: those that ended before it failed.
              const before = endedFirst[i]!.slice(0, endedFirst[i]!.indexOf(n));
              for (const k of before) expect(specs[i]!.fails[k]).toBe(true);
              // Those still running when it won were told to stop.
              for (const k of started) {
                if (!endedFirst[i]!.includes(k)) expect(signals[i]![k]!.aborted).toBe(true);
              }
            } else if (!(call.aborted && call.reason === call.abortReason)) {
              expect(String((call.reason as Error).message)).toMatch(/^failed c\d+a\d$/);
            }
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});
