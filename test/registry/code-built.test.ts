/**
 * A registry's `codeBuilt` option: the named policies built in code, listed beside the
 * registry's own instances (as `defaultRegistry` does), never twice, never disposed or
 * reconfigured by the registry.
 */
import { describe, expect, it } from 'vitest';
import { circuitBreaker, defaultRegistry, Registry, retry } from '../../src/index.js';
import { optionsError } from '../support/errors.js';

const listed = (registry: Registry) =>
  registry
    .snapshot()
    .instances.map((i) => `${i.kind}:${i.name}${i.key === undefined ? '' : `:${i.key}`}`);

describe('Registry option codeBuilt', () => {
  it('is off by default: a registry of your own lists its instances alone', () => {
    const payments = circuitBreaker({ name: 'payments' });
    const registry = new Registry();
    registry.circuitBreaker('orders');
    expect(listed(registry)).toEqual(['circuitBreaker:orders']);
    expect(payments.name).toBe('payments');
  });

  it('is on for defaultRegistry', () => {
    const inventory = circuitBreaker({ name: 'inventory' });
    expect(listed(defaultRegistry)).toContain('circuitBreaker:inventory');
    expect(inventory.state).toBe('closed');
  });

  it('lists the named policies built in code after the registry own named instances of their kind, keyed ones last', () => {
    const kept = [circuitBreaker({ name: 'payments' }), retry({ name: 'payments' })];
    const registry = new Registry({}, { codeBuilt: true });
    registry.circuitBreaker('orders');
    registry.keyedCircuitBreaker('api', 'a.example');
    expect(listed(registry).filter((n) => !n.includes('inventory'))).toEqual([
      'circuitBreaker:orders',
      'circuitBreaker:payments',
      'retry:payments',
      'circuitBreaker:api:a.example',
    ]);
    expect(kept).toHaveLength(2);
  });

  it('shows a name the registry holds with its own instance, and a policy registered anywhere by its registry alone', () => {
    const registry = new Registry({}, { codeBuilt: true });
    const own = registry.circuitBreaker('shared');
    const sameName = circuitBreaker({ name: 'shared' });
    const registeredHere = circuitBreaker({ name: 'here' });
    registry.register('here-by-hand', registeredHere);
    const registeredElsewhere = circuitBreaker({ name: 'elsewhere' });
    new Registry().register('elsewhere', registeredElsewhere);
    const breakers = registry.instancesForMetrics()[0]!;
    expect(breakers.named.get('shared')?.policy).toBe(own);
    const names = listed(registry);
    expect(names.filter((n) => n === 'circuitBreaker:shared')).toHaveLength(1);
    expect(names).toContain('circuitBreaker:here-by-hand');
    expect(names).not.toContain('circuitBreaker:here');
    expect(names).not.toContain('circuitBreaker:elsewhere');
    expect(sameName).not.toBe(own);
  });

  it('leaves code-built policies alone on dispose and reconfigure: they are not the registry own', () => {
    const registry = new Registry({}, { codeBuilt: true });
    const billing = circuitBreaker({ name: 'billing', breakDuration: 1_000 });
    registry.reconfigure({ circuitBreakers: { billing: { breakDuration: 5_000 } } });
    registry.dispose();
    expect(billing.stats()).toMatchObject({ successes: 0 });
    expect(listed(registry)).toContain('circuitBreaker:billing');
    expect(registry.circuitBreaker('billing')).not.toBe(billing);
  });

  it('records the state changes of code-built breakers, built before or after the registry, among its transitions', () => {
    const before = circuitBreaker({ name: 'before' });
    const registry = new Registry({}, { codeBuilt: true });
    const after = circuitBreaker({ name: 'after' });
    const seen: string[] = [];
    const stop = registry.onStateChange((t) => seen.push(`${t.name}:${t.to}`));
    before.forceOpen();
    after.forceOpen();
    circuitBreaker().forceOpen();
    expect(seen).toEqual(['before:forced-open', 'after:forced-open']);
    expect(registry.recentTransitions().map((t) => t.name)).toEqual(['before', 'after']);
    stop();
  });

  it('records no transition of a code-built breaker whose name the registry holds, nor of one registered elsewhere', () => {
    const registry = new Registry({}, { codeBuilt: true });
    registry.circuitBreaker('taken');
    const sameName = circuitBreaker({ name: 'taken' });
    const registered = circuitBreaker({ name: 'registered' });
    const other = new Registry();
    other.register('registered', registered);
    sameName.forceOpen();
    registered.forceOpen();
    expect(registry.recentTransitions()).toEqual([]);
    expect(other.recentTransitions().map((t) => `${t.name}:${t.to}`)).toEqual([
      'registered:forced-open',
    ]);
  });

  it('throws OptionsError for a value that is not a boolean', () => {
    const error = optionsError(() => new Registry({}, { codeBuilt: 'yes' as never }));
    expect(error.option).toBe('codeBuilt');
    expect(error.message).toContain('a boolean');
  });
});
