/**
 * Helpers of the circuit-breaker tests: a breaker on a ManualClock in a pipeline of its own,
 * calls with a chosen outcome ('S' succeeds, 'F' fails with `boom`), timed calls and calls left
 * in flight until settled by hand.
 */
import { expect } from 'vitest';
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type Pipeline,
  pipeline,
  type StateChangeEvent,
} from '../../src/index.js';
import { controllerOf } from '../../src/policies/circuit-breaker/CircuitBreaker.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred, track } from './async.js';

/** The error every failing call of these helpers throws or rejects with. */
export const boom = new Error('boom');

/** A breaker built with `options` on a fresh ManualClock, in a pipeline of its own. */
export function breakerOnClock(options: CircuitBreakerOptions = {}) {
  const clock = new ManualClock();
  const breaker = new CircuitBreaker({ clock, ...options });
  return { clock, breaker, p: pipeline(breaker) };
}

/** `breakerOnClock`, with the state changes it reports collected in `events`. */
export function watchedBreaker(options: CircuitBreakerOptions = {}) {
  const made = breakerOnClock(options);
  const events: StateChangeEvent[] = [];
  made.breaker.onStateChange((e) => events.push(e));
  return { ...made, events };
}

/** Runs synchronous calls through `p`, in order: 'F' throws `boom`, 'S' returns 'ok'. */
export function run(p: Pipeline, outcomes: string): void {
  for (const o of outcomes) {
    if (o === 'F') {
      expect(() =>
        p.executeSync(() => {
          throw boom;
        }),
      ).toThrow(boom);
    } else {
      expect(p.executeSync(() => 'ok')).toBe('ok');
    }
  }
}

/** `n` failing synchronous calls. */
export function fail(p: Pipeline, n = 1): void {
  run(p, 'F'.repeat(n));
}

/** `n` successful synchronous calls. */
export function succeed(p: Pipeline, n = 1): void {
  run(p, 'S'.repeat(n));
}

/** The error a synchronous call through `p` is refused with (fails the test when admitted). */
export function refusal(p: Pipeline): unknown {
  try {
    p.executeSync(() => 'ok');
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to be refused');
}

/** A call that takes `ms` on `clock`, then succeeds (or, with `ok` false, fails with `boom`). */
export async function timed(p: Pipeline, clock: ManualClock, ms: number, ok = true): Promise<void> {
  const done = p.execute(
    () =>
      new Promise((resolve, reject) =>
        clock.setTimer(() => (ok ? resolve('ok') : reject(boom)), ms),
      ),
  );
  clock.advance(ms);
  if (ok) await expect(done).resolves.toBe('ok');
  else await expect(done).rejects.toBe(boom);
}

/**
 * A call through `p` that stays in flight until settled by hand. `admitted` says whether its
 * work started; `succeed` and `fail` settle the work and return how the call ended.
 */
export function pending(p: Pipeline) {
  const work = deferred<string>();
  let admitted = false;
  const call = track(
    p.execute(() => {
      admitted = true;
      return work.promise;
    }),
  );
  const settled = async () => {
    await call.done;
    return call;
  };
  return {
    admitted,
    call,
    succeed: (value = 'ok') => {
      work.resolve(value);
      return settled();
    },
    fail: (error: unknown = boom) => {
      work.reject(error);
      return settled();
    },
  };
}

/** The reused refusal errors `breaker` has made so far (undefined until a refusal needed one). */
export function madeErrors(breaker: CircuitBreaker) {
  const made = controllerOf(breaker).refusalErrors;
  return { open: made?.openError, isolated: made?.isolatedError };
}

/** The resolved options `breaker` runs with. */
export function resolvedOptionsOf(breaker: CircuitBreaker) {
  return controllerOf(breaker).options;
}
