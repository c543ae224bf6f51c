/**
 * A breaker's state is its own: nothing outside its folder can write it, neither through the
 * type (the assignments below must not compile) nor at run time (the object has no state of
 * its own to reach: it holds its parts in private fields).
 */
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, pipeline } from '../../../src/index.js';
import { fail } from '../../support/breaker.js';

/** The members a breaker had while its state was fields of its own. */
const STATE_WORDS = [
  's',
  'gen',
  'quietGen',
  'openUntil',
  'o',
  'window',
  'needsNow',
  'probesStarted',
  'probesInFlight',
  'probeGate',
  'transitionSink',
  'latency',
  'metrics',
  'halfOpenDeadline',
  'consecutiveOpens',
  'isolations',
  'nSuccesses',
  'nFailures',
  'nRejections',
  'entered',
];

/** A breaker after a few transitions, so that every lazily made part exists. */
function usedBreaker(): CircuitBreaker {
  const breaker = new CircuitBreaker({
    window: { kind: 'consecutive', threshold: 1 },
    metrics: { latency: true },
  });
  breaker.onStateChange(() => {});
  fail(pipeline(breaker));
  breaker.isolate();
  return breaker;
}

describe('a circuit breaker exposes no writable state', () => {
  it('its own properties are its settings (read-only in its type), none of its state', () => {
    const breaker = usedBreaker();
    const keys = Object.keys(breaker);
    expect(keys.filter((k) => STATE_WORDS.includes(k))).toEqual([]);
    expect(keys.sort()).toEqual(
      ['clock', 'latencyEvery', 'mayWait', 'name', 'needsDuration', 'stepKind'].sort(),
    );
    expect(Object.getOwnPropertySymbols(breaker)).toEqual([]);
    for (const word of STATE_WORDS) expect(word in breaker).toBe(false);
  });

  it('its state, generation and stats are read-only views', () => {
    const breaker = usedBreaker();
    expect(Object.getOwnPropertyDescriptor(CircuitBreaker.prototype, 'state')?.set).toBeUndefined();
    expect(
      Object.getOwnPropertyDescriptor(CircuitBreaker.prototype, 'generation')?.set,
    ).toBeUndefined();
    const stats = breaker.stats();
    (stats as { successes: number }).successes = 99;
    expect(breaker.stats().successes).toBe(0);
  });

  it('assignments to its state do not compile', () => {
    const breaker = new CircuitBreaker();
    const write = () => {
      // @ts-expect-error: not a member
      breaker.s = 1;
      // @ts-expect-error: not a member
      breaker.gen = 2;
      // @ts-expect-error: not a member
      breaker.openUntil = 0;
      // @ts-expect-error: not a member
      breaker.o = undefined as never;
      // @ts-expect-error: not a member
      breaker.probeGate = undefined;
      // @ts-expect-error: not a member
      breaker.transitionSink = undefined;
      // @ts-expect-error: not a member
      breaker.window = undefined as never;
      // @ts-expect-error: read-only
      breaker.state = 'open';
      // @ts-expect-error: read-only
      breaker.generation = 3;
      // @ts-expect-error: read-only
      breaker.name = 'other';
    };
    expect(typeof write).toBe('function');
  });
});
