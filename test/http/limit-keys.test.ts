import { describe, expect, it } from 'vitest';
import { limitKeys } from '../../src/http/limitKeys.js';
import { Registry } from '../../src/index.js';

describe('limitKeys', () => {
  it('keeps every named instance and at most max keys of each kind and name', () => {
    const registry = new Registry({ rateLimiters: { api: { limit: 5, period: '1s' } } });
    registry.circuitBreaker('payments');
    for (let i = 0; i < 5; i++) {
      registry.keyedCircuitBreaker('api', `b${i}`);
      registry.keyedRateLimiter('api', `r${i}`);
      registry.keyedBulkhead('pool', `p${i}`);
    }
    const { instances, omitted } = limitKeys(registry.snapshot().instances, 2);
    const count = (kind: string, name: string) =>
      instances.filter((i) => i.kind === kind && i.name === name).length;
    expect(count('circuitBreaker', 'payments')).toBe(1);
    expect(count('circuitBreaker', 'api')).toBe(2);
    expect(count('rateLimiter', 'api')).toBe(2);
    expect(count('bulkhead', 'pool')).toBe(2);
    expect(omitted).toEqual(
      expect.arrayContaining([
        { kind: 'circuitBreaker', name: 'api', count: 3 },
        { kind: 'rateLimiter', name: 'api', count: 3 },
        { kind: 'bulkhead', name: 'pool', count: 3 },
      ]),
    );
    expect(omitted).toHaveLength(3);
    registry.dispose();
  });

  it('lists breakers that are not closed before the most recently used ones', () => {
    const registry = new Registry();
    registry.keyedCircuitBreaker('api', 'old').forceOpen();
    for (let i = 0; i < 5; i++) registry.keyedCircuitBreaker('api', `new${i}`);
    const { instances } = limitKeys(registry.snapshot().instances, 2);
    expect(instances.map((i) => i.key)).toEqual(['old', 'new4']);
    registry.dispose();
  });

  it('handles 200,000 keys of one name without copying them onto the stack', () => {
    const all = Array.from({ length: 200_000 }, (_, i) => ({
      kind: 'bulkhead' as const,
      name: 'pool',
      key: `k${i}`,
      stats: { inFlight: 0, queueLength: 0, maxConcurrent: 1 },
    }));
    const { instances, omitted } = limitKeys(all as never, 20);
    expect(instances).toHaveLength(20);
    expect(omitted).toEqual([{ kind: 'bulkhead', name: 'pool', count: 199_980 }]);
  });
});
