import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  type BulkheadRejectedEvent,
  bulkhead,
  bulkheadDefaults,
  ErrorCode,
  isBulkheadRejectedError,
  isPolicyRejection,
  pipeline,
  systemClock,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

/** Starts `n` calls that hold their slot until released; records the order they start in. */
function occupy(p: ReturnType<typeof pipeline>, n: number, started: number[] = [], from = 0) {
  return Array.from({ length: n }, (_, k) => {
    const id = from + k;
    const gate = deferred<number>();
    const outcome = track(
      p.execute(() => {
        started.push(id);
        return gate.promise;
      }),
    );
    return { id, gate, outcome };
  });
}

describe('Bulkhead options', () => {
  it('exports the documented defaults', () => {
    expect(bulkheadDefaults).toEqual({
      maxConcurrent: 10,
      maxQueue: 0,
      queueTimeout: Number.POSITIVE_INFINITY,
      queue: 'fifo',
      codelTarget: 5,
      codelInterval: 100,
      name: 'bulkhead',
    });
    const pool = bulkhead();
    expect(pool.maxConcurrent).toBe(10);
    expect(pool.name).toBe('bulkhead');
    expect(pool.clock).toBe(systemClock);
    expect(pool.mayWait).toBe(false);
  });

  it('takes a number as maxConcurrent', () => {
    expect(new Bulkhead(3).maxConcurrent).toBe(3);
  });

  it('admits 10 calls at once by default and refuses the 11th without queueing', async () => {
    const pool = new Bulkhead();
    const p = pipeline(pool);
    const held = occupy(p, 10);
    expect(pool.inFlight).toBe(10);
    const refused = track(p.execute(() => 'unreached'));
    await refused.done;
    expect(refused.error).toBeInstanceOf(BulkheadRejectedError);
    expect((refused.error as BulkheadRejectedError).reason).toBe('full');
    expect(pool.queueLength).toBe(0);
    for (const h of held) h.gate.resolve(h.id);
    await Promise.all(held.map((h) => h.outcome.done));
    expect(pool.inFlight).toBe(0);
  });
});

describe('Bulkhead concurrency', () => {
  it('never has more than maxConcurrent calls in flight, and frees a slot when a call ends', async () => {
    const pool = new Bulkhead({ maxConcurrent: 2 });
    const p = pipeline(pool);
    const started: number[] = [];
    const held = occupy(p, 2, started);
    expect(pool.inFlight).toBe(2);
    const refused = track(p.execute(() => 'unreached'));
    await refused.done;
    expect(refused.ok).toBe(false);
    expect(started).toEqual([0, 1]);

    held[0]!.gate.resolve(0);
    await held[0]!.outcome.done;
    expect(pool.inFlight).toBe(1);
    expect(await p.execute(() => 'admitted')).toBe('admitted');
    held[1]!.gate.reject(new Error('failed'));
    await held[1]!.outcome.done;
    expect(pool.inFlight).toBe(0);
  });

  it('releases the slot when fn throws synchronously', async () => {
    const pool = new Bulkhead({ maxConcurrent: 1 });
    const p = pipeline(pool);
    await expect(
      p.execute(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(pool.inFlight).toBe(0);
  });

  it('works through executeSync when it has no queue', () => {
    const pool = new Bulkhead({ maxConcurrent: 1 });
    const p = pipeline(pool);
    expect(p.executeSync(() => 42)).toBe(42);
    expect(() =>
      p.executeSync(() => {
        expect(pool.inFlight).toBe(1);
        return p.executeSync(() => 'nested');
      }),
    ).toThrow(BulkheadRejectedError);
    expect(pool.inFlight).toBe(0);
  });

  it('a bulkhead with a queue cannot run through executeSync', () => {
    const p = pipeline(new Bulkhead({ maxConcurrent: 1, maxQueue: 1 }));
    expect(() => p.executeSync(() => 1)).toThrow(UsageError);
  });
});

describe('Bulkhead queue', () => {
  it('queues up to maxQueue calls and admits them in FIFO order as slots free', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 2, maxQueue: 3, clock });
    expect(pool.mayWait).toBe(true);
    const p = pipeline(pool);
    const started: number[] = [];
    const running = occupy(p, 2, started);
    const queued = occupy(p, 3, started, 2);
    await clock.advanceAsync(0);
    expect(started).toEqual([0, 1]);
    expect(pool.inFlight).toBe(2);
    expect(pool.queueLength).toBe(3);

    running[1]!.gate.resolve(1);
    await clock.advanceAsync(0);
    expect(started).toEqual([0, 1, 2]);
    expect(pool.queueLength).toBe(2);
    expect(pool.inFlight).toBe(2);

    running[0]!.gate.resolve(0);
    queued[0]!.gate.resolve(2);
    await clock.advanceAsync(0);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(pool.queueLength).toBe(0);
    for (const q of queued) q.gate.resolve(q.id);
    await Promise.all([...running, ...queued].map((h) => h.outcome.done));
    expect(queued.map((q) => q.outcome.value)).toEqual([2, 3, 4]);
    expect(pool.inFlight).toBe(0);
  });

  it('refuses with reason "full" once the queue holds maxQueue calls', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 2, name: 'db', clock });
    const events: BulkheadRejectedEvent[] = [];
    pool.onRejected((e) => events.push(e));
    const p = pipeline(pool);
    const held = occupy(p, 3);
    const refused = track(p.execute(() => 'unreached'));
    await refused.done;
    const error = refused.error as BulkheadRejectedError;
    expect(error).toBeInstanceOf(BulkheadRejectedError);
    expect(isBulkheadRejectedError(error)).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error.reason).toBe('full');
    expect(error.maxConcurrent).toBe(1);
    expect(error.code).toBe(ErrorCode.BulkheadFull);
    expect(error.policy).toBe('bulkhead');
    expect(error.policyName).toBe('db');
    expect(error.message).toBe('Bulkhead "db" is full (1 in flight)');
    expect(events).toEqual([{ reason: 'full', inFlight: 1, queued: 2 }]);
    for (const h of held) h.gate.resolve(h.id);
    await clock.advanceAsync(0);
    await Promise.all(held.map((h) => h.outcome.done));
  });

  it('without a queue timeout, a queued call waits indefinitely and sets no timer', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 1, clock });
    const p = pipeline(pool);
    const [running] = occupy(p, 1);
    const waiting = track(p.execute(() => 'eventually'));
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(1e9);
    expect(waiting.settled).toBe(false);
    running!.gate.resolve(0);
    await waiting.done;
    expect(waiting.value).toBe('eventually');
  });

  it('refuses a call with reason "queue-timeout" exactly when it has waited queueTimeout ms', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 100, clock });
    const events: [number, BulkheadRejectedEvent][] = [];
    pool.onRejected((e) => events.push([clock.now(), e]));
    const p = pipeline(pool);
    const [running] = occupy(p, 1);
    let calls = 0;
    const first = track(p.execute(() => ++calls));
    await clock.advanceAsync(40);
    const second = track(p.execute(() => ++calls));
    expect(pool.queueLength).toBe(2);
    expect(clock.pendingTimers).toBe(1);

    await clock.advanceAsync(59);
    expect(first.settled).toBe(false);
    await clock.advanceAsync(1);
    expect(first.settled).toBe(true);
    const error = first.error as BulkheadRejectedError;
    expect(error).toBeInstanceOf(BulkheadRejectedError);
    expect(error.reason).toBe('queue-timeout');
    expect(error.message).toBe(
      'Bulkhead "bulkhead": the call waited in the queue past its queue timeout',
    );
    expect(pool.queueLength).toBe(1);
    expect(events).toEqual([[100, { reason: 'queue-timeout', inFlight: 1, queued: 1 }]]);

    await clock.advanceAsync(40);
    expect(second.error).toBe(error);
    expect(pool.queueLength).toBe(0);
    expect(calls).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    running!.gate.resolve(0);
    await running!.outcome.done;
    expect(pool.inFlight).toBe(0);
  });

  it('a call admitted before its queue timeout is not refused later', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 1, queueTimeout: 100, clock });
    const p = pipeline(pool);
    const [running] = occupy(p, 1);
    const work = deferred<string>();
    const queued = track(p.execute(() => work.promise));
    await clock.advanceAsync(50);
    running!.gate.resolve(0);
    await clock.advanceAsync(100);
    expect(queued.settled).toBe(false);
    work.resolve('ran');
    await queued.done;
    expect(queued.value).toBe('ran');
  });

  it('a queued caller whose signal aborts leaves at once; the slot goes to the next waiter', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 3, queueTimeout: 1000, clock });
    const p = pipeline(pool);
    const started: string[] = [];
    const [running] = occupy(p, 1);
    const controller = new AbortController();
    const leaving = track(
      p.execute(
        () => {
          started.push('leaving');
        },
        { signal: controller.signal },
      ),
    );
    const next = track(
      p.execute(() => {
        started.push('next');
        return 'next ran';
      }),
    );
    expect(pool.queueLength).toBe(2);
    const reason = new Error('no longer needed');
    controller.abort(reason);
    await leaving.done;
    expect(leaving.error).toBe(reason);
    expect(pool.queueLength).toBe(1);
    expect(pool.inFlight).toBe(1);

    running!.gate.resolve(0);
    await next.done;
    expect(next.value).toBe('next ran');
    expect(started).toEqual(['next']);
    expect(pool.queueLength).toBe(0);
    expect(pool.inFlight).toBe(0);
    await clock.advanceAsync(2000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('dispose() refuses queued calls with UsageError; calls in flight finish normally', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({
      maxConcurrent: 1,
      maxQueue: 2,
      queueTimeout: 500,
      clock,
      name: 'x',
    });
    const events: BulkheadRejectedEvent[] = [];
    pool.onRejected((e) => events.push(e));
    const p = pipeline(pool);
    const [running] = occupy(p, 1);
    let calls = 0;
    const a = track(p.execute(() => ++calls));
    const b = track(p.execute(() => ++calls));
    expect(clock.pendingTimers).toBe(1);
    pool.dispose();
    await a.done;
    await b.done;
    expect(a.error).toBeInstanceOf(UsageError);
    expect((a.error as Error).message).toContain('"x"');
    expect(b.error).toBeInstanceOf(UsageError);
    expect(pool.queueLength).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(calls).toBe(0);

    running!.gate.resolve(7);
    await running!.outcome.done;
    expect(running!.outcome.value).toBe(7);
    expect(pool.inFlight).toBe(0);

    // Listeners are gone; the bulkhead still works.
    const held = occupy(p, 1);
    occupy(p, 2);
    const refused = track(p.execute(() => 'unreached'));
    await refused.done;
    expect((refused.error as BulkheadRejectedError).reason).toBe('full');
    expect(events).toEqual([]);
    pool.dispose();
    held[0]!.gate.resolve(1);
    await held[0]!.outcome.done;
  });
});

describe('Bulkhead events and errors', () => {
  it('onRejected reports the reason and the counts, and its disposer stops it', async () => {
    const pool = new Bulkhead({ maxConcurrent: 2 });
    const events: BulkheadRejectedEvent[] = [];
    const stop = pool.onRejected((e) => events.push(e));
    const p = pipeline(pool);
    const held = occupy(p, 2);
    await p.execute(() => 0).catch(() => {});
    stop();
    await p.execute(() => 0).catch(() => {});
    expect(events).toEqual([{ reason: 'full', inFlight: 2, queued: 0 }]);
    for (const h of held) h.gate.resolve(h.id);
    await Promise.all(held.map((h) => h.outcome.done));
  });

  it('refuses with one preallocated, stackless error', async () => {
    const pool = new Bulkhead({ maxConcurrent: 1 });
    const p = pipeline(pool);
    const held = occupy(p, 1);
    const a = await p.tryExecute(() => 0);
    const b = await p.tryExecute(() => 0);
    expect(a.ok || b.ok).toBe(false);
    if (a.ok || b.ok) return;
    expect(a.rejected).toBe(true);
    expect(a.error).toBe(b.error);
    expect((a.error as Error).stack).toBe(
      'BulkheadRejectedError: Bulkhead "bulkhead" is full (1 in flight)',
    );
    held[0]!.gate.resolve(0);
    await held[0]!.outcome.done;
  });

  it('with debug: true refuses with a fresh error carrying a stack trace each time', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({
      maxConcurrent: 1,
      maxQueue: 1,
      queueTimeout: 10,
      debug: true,
      clock,
    });
    const p = pipeline(pool);
    const held = occupy(p, 1);
    const queued = track(p.execute(() => 0));
    const a = track(p.execute(() => 0));
    const b = track(p.execute(() => 0));
    await Promise.all([a.done, b.done]);
    expect(a.error).toBeInstanceOf(BulkheadRejectedError);
    expect(a.error).not.toBe(b.error);
    expect((a.error as Error).stack).toContain('bulkhead.test.ts');
    await clock.advanceAsync(10);
    await queued.done;
    expect((queued.error as BulkheadRejectedError).reason).toBe('queue-timeout');
    expect((queued.error as Error).stack).toMatch(/\n\s+at /);
    held[0]!.gate.resolve(0);
    await held[0]!.outcome.done;
  });
});
