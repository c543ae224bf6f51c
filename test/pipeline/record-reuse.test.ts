/**
 * A pipeline reuses the record of a finished call for the next one. These tests pin that reuse
 * is invisible: a context kept past its call stays that call's, an abandoned attempt keeps its
 * record until it ends, many calls in flight at once each get their own outcome, and a pooled
 * record keeps nothing of the call it served alive.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  type ExecutionContext,
  pipeline,
  retry,
  TimeoutError,
  timeout,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { untilAborted } from '../support/async.js';

/** A seeded xorshift source, so a failing order can be replayed. */
function random(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('pipeline record reuse', () => {
  it('a context kept past its call keeps its own signal: a later deadline aborts only the later call', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, clock }));
    let first!: ExecutionContext;
    await p.execute((context) => {
      first = context;
      return 1;
    });
    const firstSignal = first.signal;
    let second!: ExecutionContext;
    const late = p.execute((context) => {
      second = context;
      return untilAborted(context);
    });
    const settled = late.catch((e: unknown) => e);
    expect(second).not.toBe(first);
    clock.advance(100);
    expect(await settled).toBeInstanceOf(TimeoutError);
    expect(second.signal.aborted).toBe(true);
    expect(first.signal).toBe(firstSignal);
    expect(first.signal.aborted).toBe(false);
  });

  it('a context kept from attempt 3 still says attempt 3 after later calls start at 1', async () => {
    const clock = new ManualClock();
    const p = pipeline(retry({ clock, maxAttempts: 3, delay: 10, jitter: 'none' }));
    const seen: ExecutionContext[] = [];
    const call = p.execute((context) => {
      seen.push(context);
      return context.attempt < 3 ? Promise.reject(new Error('again')) : 'third';
    });
    await clock.advanceAsync(10);
    await clock.advanceAsync(20);
    expect(await call).toBe('third');
    expect(seen.map((c) => c.attempt)).toEqual([1, 2, 3]);
    const next: number[] = [];
    await p.execute((context) => next.push(context.attempt));
    expect(next).toEqual([1]);
    expect(seen.map((c) => c.attempt)).toEqual([1, 2, 3]);
  });

  it('a record whose attempt an aggressive timeout abandoned is not reused until that attempt ends', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 2, clock });
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 5 } });
    const p = pipeline(breaker, timeout({ timeout: 100, strategy: 'aggressive', clock }), pool);
    let finish!: (v: string) => void;
    const abandoned = p.execute(() => new Promise<string>((res) => (finish = res)));
    const outcome = abandoned.catch((e: unknown) => e);
    clock.advance(100);
    expect(await outcome).toBeInstanceOf(TimeoutError);
    expect(pool.inFlight).toBe(1);
    // Later calls run while the abandoned attempt still holds its permit and its record.
    for (let i = 0; i < 3; i++) {
      expect(await p.execute(() => Promise.resolve(`call ${i}`))).toBe(`call ${i}`);
    }
    expect(pool.inFlight).toBe(1);
    finish('late');
    await flushMicrotasks();
    expect(pool.inFlight).toBe(0);
    expect(await p.execute(() => 'after')).toBe('after');
    // The breaker saw the timeout and the four successes, nothing of the late outcome.
    expect(breaker.stats()).toMatchObject({ failures: 1, successes: 4, state: 'closed' });
  });

  it.each([
    ['cooperative', 1],
    ['aggressive', 2],
    ['cooperative', 3],
    ['aggressive', 4],
  ] as const)(
    '200 calls in flight at once, settled in a random order (%s, seed %i), each get their own value',
    async (strategy, seed) => {
      const next = random(seed);
      const clock = new ManualClock();
      const p = pipeline(
        retry({ clock, maxAttempts: 2, delay: 1, jitter: 'none' }),
        timeout({ timeout: 1_000, strategy, clock }),
      );
      for (let round = 0; round < 3; round++) {
        const settle: (() => void)[] = [];
        const calls: Promise<unknown>[] = [];
        for (let i = 0; i < 200; i++) {
          const fail = next() < 0.2;
          calls.push(
            p.tryExecute(
              (context) =>
                new Promise((res, rej) =>
                  settle.push(() =>
                    fail && context.attempt === 1
                      ? rej(new Error(`${round}/${i}`))
                      : res(`${round}/${i}@${context.attempt}`),
                  ),
                ),
            ),
          );
        }
        // Settle first attempts in a shuffled order; retried calls start their second attempt
        // after the delay and are settled in the next pass.
        while (settle.length > 0) {
          const batch = settle.splice(0);
          for (let k = batch.length - 1; k > 0; k--) {
            const j = Math.floor(next() * (k + 1));
            [batch[k], batch[j]] = [batch[j]!, batch[k]!];
          }
          for (const s of batch) s();
          await flushMicrotasks();
          await clock.advanceAsync(1);
        }
        const results = await Promise.all(calls);
        results.forEach((r, i) => {
          expect(r).toMatchObject({ ok: true });
          expect((r as { value: string }).value).toMatch(new RegExp(`^${round}/${i}@[12]$`));
        });
      }
    },
  );

  it('a pooled record keeps nothing of the call it served alive', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const p = pipeline(
      retry({ maxAttempts: 2, handle: () => false }),
      timeout({ timeout: 1_000 }),
      new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 } }),
    );
    const refs: WeakRef<object>[] = [];
    await (async () => {
      for (let i = 0; i < 4; i++) {
        const value = { big: new Array(1_000).fill(i) };
        const fn = () => Promise.resolve(value);
        refs.push(new WeakRef(value), new WeakRef(fn));
        expect(await p.execute(fn)).toBe(value);
      }
      const failure = new Error('failed');
      refs.push(new WeakRef(failure));
      const caught = await p.execute(() => Promise.reject(failure), {}).catch((e: unknown) => e);
      expect(caught === failure).toBe(true);
    })();
    // Let the handlers' microtasks finish, then collect.
    await new Promise((r) => setTimeout(r, 0));
    gc();
    gc();
    expect(refs.map((r) => r.deref() !== undefined)).toEqual(refs.map(() => false));
  });
});
