import { describe, expect, it } from 'vitest';
import { CircuitBreaker, Registry, type RegistryTransition } from '../../src/index.js';
import { writeIdle } from '../../src/policies/circuit-breaker/idle.js';
import { ManualClock } from '../../src/testing/index.js';

describe('registry transitions', () => {
  it('records the transitions of named, registered and keyed breakers, oldest first, with name and key', () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    const seen: RegistryTransition[] = [];
    const stop = registry.onStateChange((t) => seen.push(t));
    registry.circuitBreaker('payments').trip();
    const own = new CircuitBreaker({ name: 'inner-name', clock });
    registry.register('mine', own);
    own.forceOpen();
    registry.keyedCircuitBreaker('hosts', 'a:b.example').trip();
    const recent = registry.recentTransitions();
    expect(recent.map((t) => [t.name, t.key, t.from, t.to])).toEqual([
      ['payments', undefined, 'closed', 'open'],
      ['mine', undefined, 'closed', 'forced-open'],
      ['hosts', 'a:b.example', 'closed', 'open'],
    ]);
    expect(recent[0]).not.toHaveProperty('key');
    expect(recent[0]!.reason).toBe('manual');
    expect(Math.abs(recent[0]!.at - Date.now())).toBeLessThan(60_000);
    expect(seen).toEqual(recent);
    stop();
    registry.circuitBreaker('payments').reset();
    expect(seen).toHaveLength(3);
    expect(registry.recentTransitions()).toHaveLength(4);
  });

  it('keeps the last 100 transitions', () => {
    const registry = new Registry({}, { clock: new ManualClock() });
    const breaker = registry.circuitBreaker('b');
    for (let i = 0; i < 130; i++) {
      if (i % 2 === 0) breaker.trip();
      else breaker.reset();
    }
    const recent = registry.recentTransitions();
    expect(recent).toHaveLength(100);
    expect(recent[0]!.generation).toBe(31);
    expect(recent[99]!.generation).toBe(130);
  });

  it('does not keep an idle keyed breaker from being shelved', () => {
    const registry = new Registry({}, { clock: new ManualClock() });
    registry.onStateChange(() => {});
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    const numbers = new Float64Array(6);
    expect(writeIdle(a, numbers, 0)).toBe(true);
  });

  it('forgets its transitions on dispose', () => {
    const registry = new Registry({}, { clock: new ManualClock() });
    registry.circuitBreaker('b').trip();
    registry.dispose();
    expect(registry.recentTransitions()).toEqual([]);
  });
});
