import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  pipeline,
  Retry,
  Timeout,
  TimeoutError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { macrotask } from '../support/async.js';

const N = 100_000;

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('a long-lived caller signal keeps its abort listener count at baseline', () => {
  it(`after ${N} successful executions through timeout + retry`, async () => {
    const clock = new ManualClock();
    const limit = new Timeout({ timeout: 1_000, clock });
    const p = pipeline(limit, new Retry({ clock, maxAttempts: 3 }));
    const { signal } = new AbortController();
    const baseline = listeners(signal);
    expect(baseline).toBe(0);
    let during = -1;
    let sum = 0;
    for (let i = 0; i < N; i++) {
      sum += await p.execute(
        () => {
          if (i === 0) during = listeners(signal);
          return i % 2 === 0 ? i : Promise.resolve(i);
        },
        { signal },
      );
    }
    // The pipeline does listen while a call runs, and stops when it ends.
    expect(during).toBe(1);
    expect(sum).toBe((N * (N - 1)) / 2);
    expect(listeners(signal)).toBe(baseline);
    // Finished calls do not pile up in the deadline queue either.
    expect(limit.pending).toBeLessThanOrEqual(1);
  });

  it(`after ${N} executions that fail and are retried`, async () => {
    const clock = new ManualClock();
    const limit = new Timeout({ timeout: 1_000, clock });
    const p = pipeline(
      limit,
      new Retry({ clock, delay: 0, backoff: 'constant', jitter: 'none', maxAttempts: 3 }),
      new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 10 } }),
      new Bulkhead({ maxConcurrent: 1, clock }),
    );
    const { signal } = new AbortController();
    const baseline = listeners(signal);
    let attempts = 0;
    let ok = 0;
    for (let i = 0; i < N; i++) {
      const call = p.execute(
        ({ attempt }) => {
          attempts++;
          if (attempt === 1) throw new Error('first attempt fails');
          return attempt;
        },
        { signal },
      );
      // Fires the zero-length retry delay once it is armed.
      await clock.advanceAsync(0);
      if ((await call) === 2) ok++;
    }
    expect(ok).toBe(N);
    expect(attempts).toBe(2 * N);
    expect(listeners(signal)).toBe(baseline);
    expect(limit.pending).toBeLessThanOrEqual(1);
  });

  it('after executions that time out (cooperative and aggressive) and calls refused by a full bulkhead', async () => {
    const clock = new ManualClock();
    const { signal } = new AbortController();
    const baseline = listeners(signal);
    for (const strategy of ['cooperative', 'aggressive'] as const) {
      const p = pipeline(
        new Timeout({ timeout: 10, strategy, clock }),
        new Bulkhead({ maxConcurrent: 1, clock }),
      );
      for (let i = 0; i < 10_000; i++) {
        let rejected: unknown;
        const call = p
          .execute(
            ({ signal: own }) =>
              new Promise((_, reject) => own.addEventListener('abort', () => reject(own.reason))),
            { signal },
          )
          .catch((error: unknown) => {
            rejected = error;
          });
        // A second call while the first holds the only permit is refused at once.
        await p.execute(() => 'refused', { signal }).catch(() => undefined);
        await clock.advanceAsync(10);
        await call;
        expect(rejected).toBeInstanceOf(TimeoutError);
      }
    }
    expect(listeners(signal)).toBe(baseline);
  });
});

// With no timeout and no caller signal nothing can abort the call, but user code (fetch, a
// driver, a nested pipeline) still adds listeners to `ctx.signal`: those must go with the call
// rather than pile up on one object shared by every call.
describe('a pipeline with no timeout and no caller signal gives each call a signal of its own', () => {
  const shapes: readonly (readonly [string, () => ReturnType<typeof pipeline>])[] = [
    ['no policy', () => pipeline()],
    ['a lone breaker', () => pipeline(new CircuitBreaker())],
    ['two gates', () => pipeline(new CircuitBreaker(), new Bulkhead(10))],
    ['a retry', () => pipeline(new Retry({ maxAttempts: 1 }))],
    ['a bulkhead queue', () => pipeline(new Bulkhead({ maxConcurrent: 1, maxQueue: 10 }))],
  ];
  for (const [name, make] of shapes) {
    it(`${name}: 1,000 calls that each add a listener leave it on their own signal only`, async () => {
      const p = make();
      const seen = new Set<AbortSignal>();
      for (let i = 0; i < 1_000; i++) {
        await p.execute(({ signal }) => {
          signal.addEventListener('abort', () => {});
          seen.add(signal);
          return Promise.resolve(i);
        });
      }
      expect(seen.size).toBe(1_000);
      for (const signal of seen) {
        expect(signal.aborted).toBe(false);
        expect(listeners(signal)).toBe(1);
      }
    });
  }

  it('executeSync: each call gets a signal of its own too', () => {
    const p = pipeline(new CircuitBreaker());
    const seen = new Set<AbortSignal>();
    for (let i = 0; i < 100; i++) {
      p.executeSync(({ signal }) => {
        signal.addEventListener('abort', () => {});
        seen.add(signal);
      });
    }
    expect(seen.size).toBe(100);
    for (const signal of seen) expect(listeners(signal)).toBe(1);
  });

  it('an attempt reads the same signal every time it asks', async () => {
    const p = pipeline(new Retry({ maxAttempts: 1 }));
    await p.execute((context) => {
      expect(context.signal).toBe(context.signal);
    });
  });

  it('20 concurrent calls nesting another pipeline under ctx.signal emit no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const outer = pipeline(new CircuitBreaker());
      const inner = pipeline(new Retry({ maxAttempts: 1 }), new Bulkhead(100));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const calls = Array.from({ length: 20 }, (_, i) =>
        outer.execute(({ signal }) =>
          inner.execute(
            async ({ signal: innerSignal }) => {
              innerSignal.addEventListener('abort', () => {});
              await gate;
              return i;
            },
            { signal },
          ),
        ),
      );
      await macrotask();
      release();
      expect(await Promise.all(calls)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      // Node reports the warning on a later tick.
      await macrotask();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
