import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  type BulkheadRejectedEvent,
  ConfigError,
  collectMetrics,
  pipeline,
  Registry,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';
import { issuesOf } from '../../support/config.js';
import { optionsError } from '../../support/errors.js';

type P = ReturnType<typeof pipeline>;

/** Starts `n` calls that hold their slot until released; records the order they start in. */
function occupy(p: P, n: number, started: string[], prefix: string) {
  return Array.from({ length: n }, (_, k) => {
    const id = `${prefix}${k}`;
    const gate = deferred<string>();
    const outcome = track(
      p.execute(() => {
        started.push(id);
        return gate.promise;
      }),
    );
    return { id, gate, outcome };
  });
}

/** Ends a call in flight and lets the queue move. */
async function finish(clock: ManualClock, h: { id: string; gate: { resolve(v: string): void } }) {
  h.gate.resolve(h.id);
  await clock.advanceAsync(0);
}

const reasonOf = (o: { error: unknown }) => (o.error as BulkheadRejectedError).reason;

/** The ring behind a bulkhead's queue (internal), to check that it stays bounded. */
const ringSize = (b: Bulkhead) => (b as unknown as { queue: { q: { size: number } } }).queue.q.size;

describe('Bulkhead queue option: validation', () => {
  it('takes fifo, lifo and codel, fifo by default, and names the valid values otherwise', () => {
    expect(new Bulkhead({ maxQueue: 1 }).stats().queue).toBe('fifo');
    expect(new Bulkhead({ maxQueue: 1, queue: 'lifo' }).stats().queue).toBe('lifo');
    expect(new Bulkhead({ maxQueue: 1, queue: 'codel' }).stats().queue).toBe('codel');
    const e = optionsError(() => new Bulkhead({ maxQueue: 1, queue: 'random' as 'fifo' }));
    expect(e.option).toBe('queue');
    expect(e.value).toBe('random');
    expect(e.message).toBe('Expected `queue` to be one of "fifo", "lifo", "codel", got "random"');
  });

  it('refuses lifo or codel without a queue (maxQueue 0), saying maxQueue must be at least 1', () => {
    for (const queue of ['lifo', 'codel'] as const) {
      const e = optionsError(() => new Bulkhead({ queue }));
      expect(e.option).toBe('queue');
      expect(e.value).toBe(queue);
      expect(e.expected).toMatch(/"fifo" while maxQueue is 0 .*maxQueue >= 1/);
    }
  });

  it('refuses the CoDel durations with another discipline', () => {
    const e = optionsError(() => new Bulkhead({ maxQueue: 1, queue: 'lifo', codelTarget: 5 }));
    expect(e.option).toBe('codelTarget');
    expect(e.expected).toBe('not set: it applies only with queue: "codel"');
    expect(optionsError(() => new Bulkhead({ maxQueue: 1, codelInterval: 50 })).option).toBe(
      'codelInterval',
    );
  });

  it('takes the CoDel durations as ms or strings; the target must lie below the interval', () => {
    const b = new Bulkhead({
      maxQueue: 1,
      queue: 'codel',
      codelTarget: '10ms',
      codelInterval: '0.5s',
    });
    expect((b as unknown as { o: object }).o).toMatchObject({
      codelTarget: 10,
      codelInterval: 500,
    });
    const tooLong = optionsError(
      () => new Bulkhead({ maxQueue: 1, queue: 'codel', codelTarget: 100 }),
    );
    expect(tooLong.option).toBe('codelTarget');
    expect(tooLong.expected).toMatch(/^a number of ms in \[1, 99\]/);
    const zero = optionsError(() => new Bulkhead({ maxQueue: 1, queue: 'codel', codelTarget: 0 }));
    expect(zero.option).toBe('codelTarget');
    const interval = optionsError(
      () => new Bulkhead({ maxQueue: 1, queue: 'codel', codelInterval: -1 }),
    );
    expect(interval.option).toBe('codelInterval');
    expect(interval.expected).toMatch(/^a number of ms in \[2, /);
  });
});

describe('Bulkhead queue: lifo', () => {
  it('admits the newest waiting call first', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queue: 'lifo', clock });
    const p = pipeline(pool);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const queued = occupy(p, 3, started, 'q');
    await finish(clock, running!);
    expect(started).toEqual(['r0', 'q2']);
    await finish(clock, queued[2]!);
    expect(started).toEqual(['r0', 'q2', 'q1']);
    const late = occupy(p, 1, started, 'late');
    await finish(clock, queued[1]!);
    expect(started).toEqual(['r0', 'q2', 'q1', 'late0']);
    await finish(clock, late[0]!);
    await finish(clock, queued[0]!);
    expect(started).toEqual(['r0', 'q2', 'q1', 'late0', 'q0']);
    expect(pool.inFlight).toBe(0);
  });

  it('the oldest waiting calls still leave at their queue timeout, on one timer', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({
      maxConcurrent: 1,
      maxQueue: 5,
      queueTimeout: 100,
      queue: 'lifo',
      clock,
    });
    const p = pipeline(pool);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const old = occupy(p, 1, started, 'old');
    await clock.advanceAsync(60);
    const young = occupy(p, 1, started, 'young');
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(40);
    expect(old[0]!.outcome.settled).toBe(true);
    expect(reasonOf(old[0]!.outcome)).toBe('queue-timeout');
    await finish(clock, running!);
    expect(started).toEqual(['r0', 'young0']);
    await finish(clock, young[0]!);
  });

  for (const queue of ['fifo', 'lifo'] as const) {
    it(`${queue}: callers that give up above a waiter that never moves do not pile up in the ring`, async () => {
      const clock = new ManualClock();
      const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 4, queue, clock });
      const p = pipeline(pool);
      const started: string[] = [];
      const [running] = occupy(p, 1, started, 'r');
      const [bottom] = occupy(p, 1, started, 'bottom');
      for (let k = 0; k < 1000; k++) {
        const controller = new AbortController();
        const gone = track(p.execute(() => 'unreached', { signal: controller.signal }));
        controller.abort();
        await gone.done;
      }
      expect(pool.queueLength).toBe(1);
      expect(ringSize(pool)).toBeLessThanOrEqual(18);
      await finish(clock, running!);
      await finish(clock, bottom!);
      expect(started).toEqual(['r0', 'bottom0']);
    });
  }
});

describe('Bulkhead queue: codel', () => {
  function codel(clock: ManualClock, extra: object = {}) {
    const pool = new Bulkhead({
      maxConcurrent: 1,
      maxQueue: 10,
      queue: 'codel',
      clock,
      ...extra,
    });
    const events: [number, BulkheadRejectedEvent][] = [];
    pool.onRejected((e) => events.push([clock.now(), e]));
    return { pool, p: pipeline(pool), events };
  }

  it('serves FIFO, within the queue timeout, while the queue emptied within the last interval', async () => {
    const clock = new ManualClock();
    const { pool, p, events } = codel(clock);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const a = occupy(p, 1, started, 'a');
    await clock.advanceAsync(50);
    const b = occupy(p, 1, started, 'b');
    await clock.advanceAsync(49);
    // Non-empty for 99 ms: not standing yet, however long each call waited.
    expect(pool.stats().dropping).toBe(false);
    await finish(clock, running!);
    expect(started).toEqual(['r0', 'a0']);
    await finish(clock, a[0]!);
    expect(started).toEqual(['r0', 'a0', 'b0']);
    await finish(clock, b[0]!);
    expect(events).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('once the queue has stood for the interval, a freed slot refuses calls past the target and serves the newest', async () => {
    const clock = new ManualClock();
    const { pool, p, events } = codel(clock);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const old = occupy(p, 2, started, 'old');
    await clock.advanceAsync(97);
    const fresh = occupy(p, 2, started, 'fresh');
    await clock.advanceAsync(3);
    expect(pool.stats()).toMatchObject({ queue: 'codel', dropping: true, queueLength: 4 });
    await finish(clock, running!);
    // old0 and old1 waited 100 ms > 5 ms: refused; fresh1 is the newest.
    expect(started).toEqual(['r0', 'fresh1']);
    for (const o of old) {
      expect(o.outcome.error).toBeInstanceOf(BulkheadRejectedError);
      expect(reasonOf(o.outcome)).toBe('codel');
    }
    expect((old[0]!.outcome.error as Error).message).toBe(
      'Bulkhead "bulkhead": the queue stood longer than codelInterval and the call waited past codelTarget',
    );
    expect(events).toEqual([
      [100, { reason: 'codel', inFlight: 0, queued: 3 }],
      [100, { reason: 'codel', inFlight: 0, queued: 2 }],
    ]);
    expect(pool.stats().rejectionsByReason).toEqual({ full: 0, queueTimeout: 0, codel: 2 });
    // fresh0 has waited exactly 3 ms, not past the target: still queued.
    expect(fresh[0]!.outcome.settled).toBe(false);
    await clock.advanceAsync(3);
    await finish(clock, fresh[1]!);
    expect(reasonOf(fresh[0]!.outcome)).toBe('codel');
    expect(pool.queueLength).toBe(0);
    expect(pool.stats().dropping).toBe(false);
  });

  it('a call arriving at a standing queue refuses the calls past the target, with no slot freed and no timer', async () => {
    const clock = new ManualClock();
    const { pool, p } = codel(clock);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const old = occupy(p, 1, started, 'old');
    await clock.advanceAsync(100);
    expect(old[0]!.outcome.settled).toBe(false);
    const fresh = occupy(p, 1, started, 'fresh');
    await clock.advanceAsync(0);
    expect(reasonOf(old[0]!.outcome)).toBe('codel');
    expect(pool.queueLength).toBe(1);
    expect(clock.pendingTimers).toBe(0);
    await finish(clock, running!);
    expect(started).toEqual(['r0', 'fresh0']);
    await finish(clock, fresh[0]!);
  });

  it('a full standing queue makes room for a new call by refusing those past the target', async () => {
    const clock = new ManualClock();
    const { pool, p } = codel(clock, { maxQueue: 2 });
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const old = occupy(p, 2, started, 'old');
    await clock.advanceAsync(100);
    const fresh = occupy(p, 1, started, 'fresh');
    await clock.advanceAsync(0);
    expect(old.map((o) => reasonOf(o.outcome))).toEqual(['codel', 'codel']);
    expect(fresh[0]!.outcome.settled).toBe(false);
    expect(pool.stats().rejectionsByReason).toEqual({ full: 0, queueTimeout: 0, codel: 2 });
    // Within the target, a full queue still refuses as full.
    const a = occupy(p, 1, started, 'a');
    const b = track(p.execute(() => 'unreached'));
    await b.done;
    expect(reasonOf(b)).toBe('full');
    await finish(clock, running!);
    await finish(clock, a[0]!);
    await finish(clock, fresh[0]!);
  });

  it('shows codel refusals as a metric series only for CoDel bulkheads', () => {
    const registry = new Registry({
      bulkheads: { plain: { maxQueue: 1 }, shed: { maxQueue: 1, queue: 'codel' } },
    });
    registry.bulkhead('plain');
    registry.bulkhead('shed');
    const family = collectMetrics(registry).find(
      (f) => f.name === 'breakwater_bulkhead_rejections_total',
    )!;
    const reasons = (name: string) =>
      (family as { samples: readonly { labels: Record<string, string> }[] }).samples
        .filter((s) => s.labels.name === name)
        .map((s) => s.labels.reason);
    expect(reasons('plain')).toEqual(['full', 'queue-timeout']);
    expect(reasons('shed')).toEqual(['full', 'queue-timeout', 'codel']);
  });
});

describe('Bulkhead queue discipline: config and reconfigure', () => {
  it('reads queue and the CoDel durations from config data, strings included', () => {
    const registry = new Registry({
      defaults: { bulkhead: { maxQueue: 20 } },
      bulkheads: { db: { queue: 'codel', codelTarget: '10ms', codelInterval: '1s' } },
    });
    const db = registry.bulkhead('db');
    expect(db.stats()).toMatchObject({ queue: 'codel', dropping: false });
    expect((db as unknown as { o: object }).o).toMatchObject({
      codelTarget: 10,
      codelInterval: 1000,
    });
  });

  it('reports a bad discipline or CoDel duration in config data with its path', () => {
    expect(issuesOf({ bulkheads: { db: { maxQueue: 1, queue: 'stack' } } })).toEqual([
      {
        path: 'bulkheads.db.queue',
        message: expect.stringContaining('one of "fifo", "lifo", "codel"'),
      },
    ]);
    const issues = issuesOf({
      bulkheads: { db: { maxQueue: 1, queue: 'codel', codelTarget: '2s' } },
    });
    expect(issues.map((i) => i.path)).toEqual(['bulkheads.db.codelTarget']);
    expect(() => new Registry({ bulkheads: { db: { queue: 'lifo' } } })).toThrow(ConfigError);
  });

  it('a live bulkhead changes discipline: the next admission follows the new one', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, clock });
    const p = pipeline(pool);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const queued = occupy(p, 3, started, 'q');
    pool.reconfigure({ maxConcurrent: 1, maxQueue: 5, queue: 'lifo' });
    await finish(clock, running!);
    expect(started).toEqual(['r0', 'q2']);
    pool.reconfigure({ maxConcurrent: 1, maxQueue: 5 });
    await finish(clock, queued[2]!);
    expect(started).toEqual(['r0', 'q2', 'q0']);
    await finish(clock, queued[0]!);
    await finish(clock, queued[1]!);
  });

  it('a change to codel counts the calls already queued as arriving then', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, clock });
    const p = pipeline(pool);
    const started: string[] = [];
    const [running] = occupy(p, 1, started, 'r');
    const queued = occupy(p, 2, started, 'q');
    await clock.advanceAsync(500);
    pool.reconfigure({ maxConcurrent: 1, maxQueue: 5, queue: 'codel' });
    expect(pool.stats().dropping).toBe(false);
    await clock.advanceAsync(99);
    expect(pool.stats().dropping).toBe(false);
    await clock.advanceAsync(1);
    expect(pool.stats().dropping).toBe(true);
    await finish(clock, running!);
    // Both "arrived" 100 ms ago, past the 5 ms target.
    expect(queued.map((q) => reasonOf(q.outcome))).toEqual(['codel', 'codel']);
    expect(started).toEqual(['r0']);
  });

  it('cannot give a discipline to a bulkhead built without a queue', () => {
    const pool = new Bulkhead({ maxConcurrent: 1 });
    const e = optionsError(() => pool.reconfigure({ maxQueue: 1, queue: 'lifo' }));
    expect(e.option).toBe('maxQueue');
    expect(pool.stats().queue).toBe('fifo');
  });
});
