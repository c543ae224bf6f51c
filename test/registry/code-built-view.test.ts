/**
 * The process-wide view of named policies built in code: what is noted (named policies of
 * every kind, built in code), what is not (unnamed ones, a registry's), one entry per kind and
 * name, and a bounded, weak hold.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  bulkhead,
  CircuitBreaker,
  circuitBreaker,
  RateLimiter,
  Registry,
  retry,
  Timeout,
  timeout,
} from '../../src/index.js';
import { codeBuiltEntries, codeBuiltPolicies } from '../../src/registry/codeBuilt.js';
import { macrotask } from '../support/async.js';

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const codeBuilt = (kind: string) => codeBuiltPolicies().get(kind) ?? [];
const names = (kind: string) => codeBuilt(kind).map(([name]) => name);

describe('named policies built in code', () => {
  it('are noted for every kind, by factory or constructor, under their name', () => {
    const kept = [
      circuitBreaker({ name: 'cb-factory' }),
      new CircuitBreaker({ name: 'cb-class' }),
      retry({ name: 'retry-a' }),
      timeout({ name: 'timeout-a', timeout: 100 }),
      new Timeout({ name: 'timeout-b', timeout: '1s' }),
      bulkhead({ name: 'bulkhead-a', maxConcurrent: 2 }),
      new Bulkhead({ name: 'bulkhead-b' }),
      new RateLimiter({ name: 'limiter-a', limit: 5, period: 1_000 }),
    ];
    expect(names('circuitBreaker')).toEqual(['cb-factory', 'cb-class']);
    expect(names('retry')).toEqual(['retry-a']);
    expect(names('timeout')).toEqual(['timeout-a', 'timeout-b']);
    expect(names('bulkhead')).toEqual(['bulkhead-a', 'bulkhead-b']);
    expect(names('rateLimiter')).toEqual(['limiter-a']);
    expect(codeBuilt('circuitBreaker').map(([, p]) => p)).toEqual([kept[0], kept[1]]);
  });

  it('are not noted without a name, nor when a registry builds them, named or keyed', () => {
    const before = codeBuiltEntries();
    const unnamed = [circuitBreaker(), new Bulkhead(3), timeout(100), timeout('2s'), retry()];
    const registry = new Registry({ timeouts: { t: { timeout: 50 } } });
    registry.circuitBreaker('from-registry');
    registry.timeout('t');
    registry.keyedCircuitBreaker('per-host', 'a.example');
    registry.keyedBulkhead('per-host', 'a.example');
    expect(codeBuiltEntries()).toBe(before);
    expect(unnamed).toHaveLength(5);
    registry.dispose();
  });

  it('keep one entry per kind and name: the policy built last under it', () => {
    const first = circuitBreaker({ name: 'rebuilt' });
    const second = circuitBreaker({ name: 'rebuilt' });
    const sameNameOtherKind = bulkhead({ name: 'rebuilt' });
    expect(codeBuilt('circuitBreaker').filter(([n]) => n === 'rebuilt')).toEqual([
      ['rebuilt', second],
    ]);
    expect(codeBuilt('bulkhead').filter(([n]) => n === 'rebuilt')).toEqual([
      ['rebuilt', sameNameOtherKind],
    ]);
    expect(first).not.toBe(second);
  });

  it('are held weakly: a listing drops the entries of collected ones', async () => {
    // Names used once each, as code that names a breaker per request would.
    (() => {
      for (let i = 0; i < 10_000; i++) circuitBreaker({ name: `once-${i}` });
    })();
    const kept = circuitBreaker({ name: 'kept' });
    // A weak reference holds its target until the job that made it has ended.
    await macrotask();
    collectGarbage();
    expect(names('circuitBreaker').filter((n) => n.startsWith('once-'))).toEqual([]);
    expect(names('circuitBreaker')).toContain('kept');
    expect(codeBuiltEntries()).toBeLessThan(100);
    expect(kept.name).toBe('kept');
  });

  it('stay bounded without any listing: the entries of collected ones are swept as new names come', async () => {
    const live: CircuitBreaker[] = [];
    for (let i = 0; i < 100; i++) live.push(circuitBreaker({ name: `live-${i}` }));
    let most = 0;
    for (let batch = 0; batch < 50; batch++) {
      (() => {
        for (let i = 0; i < 100; i++) circuitBreaker({ name: `batch-${batch}-${i}` });
      })();
      most = Math.max(most, codeBuiltEntries());
      await macrotask();
      collectGarbage();
    }
    // 5,100 names used, 100 alive: swept whenever the entries reach twice the live count
    // of the last sweep (64 at least), so a few hundred at most.
    expect(most).toBeLessThan(600);
    expect(names('circuitBreaker').filter((n) => n.startsWith('live-'))).toHaveLength(100);
    expect(live).toHaveLength(100);
  });
});
