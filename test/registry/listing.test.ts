/**
 * Bounded listings of a registry (`/health`, the dashboard's snapshots, metrics): every named
 * instance, a few keys of each keyed name, and the others counted or summed.
 */
import { describe, expect, it } from 'vitest';
import { pipeline, Registry } from '../../src/index.js';
import type { CircuitBreaker } from '../../src/policies/circuit-breaker/CircuitBreaker.js';
import type { BreakerCounts } from '../../src/policies/circuit-breaker/counts.js';
import { circuitBreakerKind } from '../../src/policies/circuit-breaker/kind.js';
import { limitedSnapshot, listKeyed } from '../../src/registry/listing.js';

describe('limitedSnapshot', () => {
  it('keeps every named instance and at most max keys of each kind and name', () => {
    const registry = new Registry({ rateLimiters: { api: { limit: 5, period: '1s' } } });
    registry.circuitBreaker('payments');
    for (let i = 0; i < 5; i++) {
      registry.keyedCircuitBreaker('api', `b${i}`);
      registry.keyedRateLimiter('api', `r${i}`);
      registry.keyedBulkhead('pool', `p${i}`);
    }
    const { instances, omitted } = limitedSnapshot(registry.instancesForMetrics(), 2);
    const count = (kind: string, name: string) =>
      instances.filter((i) => i.kind === kind && i.name === name).length;
    expect(count('circuitBreaker', 'payments')).toBe(1);
    expect(count('circuitBreaker', 'api')).toBe(2);
    expect(count('rateLimiter', 'api')).toBe(2);
    expect(count('bulkhead', 'pool')).toBe(2);
    expect(omitted).toEqual([
      { kind: 'circuitBreaker', name: 'api', count: 3 },
      { kind: 'bulkhead', name: 'pool', count: 3 },
      { kind: 'rateLimiter', name: 'api', count: 3 },
    ]);
    registry.dispose();
  });

  it('lists the same instances as snapshot() when no name has more than max keys', () => {
    const registry = new Registry({ rateLimiters: { api: { limit: 5, period: '1s' } } });
    registry.circuitBreaker('payments');
    registry.retry('payments');
    registry.bulkhead('db');
    for (let i = 0; i < 3; i++) {
      registry.keyedCircuitBreaker('api', `b${i}`);
      registry.keyedRateLimiter('api', `r${i}`);
      registry.keyedBulkhead('pool', `p${i}`);
    }
    const { instances, omitted } = limitedSnapshot(registry.instancesForMetrics(), 3);
    const withoutTime = (x: unknown) =>
      JSON.parse(JSON.stringify(x, (k, v) => (k === 'timeInState' ? undefined : v)));
    expect(withoutTime(instances)).toEqual(withoutTime(registry.snapshot().instances));
    expect(omitted).toEqual([]);
    registry.dispose();
  });

  it('lists breakers that are not closed before the most recently used ones', () => {
    const registry = new Registry();
    registry.keyedCircuitBreaker('api', 'old').forceOpen();
    for (let i = 0; i < 5; i++) registry.keyedCircuitBreaker('api', `new${i}`);
    const { instances } = limitedSnapshot(registry.instancesForMetrics(), 2);
    expect(instances.map((i) => i.key)).toEqual(['old', 'new4']);
    registry.dispose();
  });

  it('reports every breaker that is not closed to its visitor, listed or not', () => {
    const registry = new Registry();
    registry.circuitBreaker('payments').forceOpen();
    registry.circuitBreaker('search');
    for (let i = 0; i < 5; i++) registry.keyedCircuitBreaker('api', `open${i}`).forceOpen();
    for (let i = 0; i < 5; i++) registry.keyedCircuitBreaker('api', `closed${i}`);
    const seen: string[] = [];
    limitedSnapshot(registry.instancesForMetrics(), 2, (_kind, name, key, state) => {
      seen.push(`${name}/${key}/${state}`);
    });
    expect(seen).toEqual([
      'payments/undefined/forced-open',
      ...[4, 3, 2, 1, 0].map((i) => `api/open${i}/forced-open`),
    ]);
    registry.dispose();
  });

  it('counts 5,000 keys of one name without listing them', () => {
    const registry = new Registry();
    for (let i = 0; i < 5_000; i++) registry.keyedBulkhead('pool', `k${i}`);
    const { instances, omitted } = limitedSnapshot(registry.instancesForMetrics(), 20);
    expect(instances).toHaveLength(20);
    expect(omitted).toEqual([{ kind: 'bulkhead', name: 'pool', count: 4_980 }]);
    registry.dispose();
  });
});

describe('listKeyed', () => {
  it('sums the keys it does not show, shelved ones included, with the number in each state', () => {
    const registry = new Registry({
      defaults: { circuitBreaker: { window: { kind: 'consecutive', threshold: 1 } } },
    });
    // 2,000 keys: beyond the instances kept live, idle ones are shelved as numbers.
    for (let i = 0; i < 2_000; i++) {
      pipeline(registry.keyedCircuitBreaker('api', `k${i}`)).executeSync(() => 'ok');
    }
    registry.keyedCircuitBreaker('api', 'k7').forceOpen();
    const breakers = registry.instancesForMetrics().find((k) => k.kind === circuitBreakerKind)!;
    const keyed = breakers.keyed.get('api')!;
    const metrics = circuitBreakerKind.metrics!;
    const others = metrics.counts() as BreakerCounts;
    const { shown, hidden } = listKeyed(circuitBreakerKind, keyed, 3, {
      hidden(breaker, store, at) {
        if (breaker === undefined) keyed.group.addShelved!(others, store, at);
        else metrics.add(others, breaker as CircuitBreaker);
      },
    });
    expect(shown.map((s) => s.key)).toEqual(['k7', 'k1999', 'k1998']);
    expect(hidden).toBe(1_997);
    expect(others.inState).toEqual([1_997, 0, 0, 0, 0, 0]);
    expect(others.successes).toBe(1_997);
    registry.dispose();
  });
});
