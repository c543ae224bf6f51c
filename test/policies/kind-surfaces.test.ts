import { describe, expect, it } from 'vitest';
import * as decorators from '../../src/decorators/index.js';
import { OptionsError } from '../../src/errors/OptionsError.js';
import * as factories from '../../src/policies/factories.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import { LIBRARY_KINDS } from '../../src/policies/kindTable.js';
import { PipelineBuilder } from '../../src/policies/PipelineBuilder.js';
import { Registry } from '../../src/registry/Registry.js';
import { type Fn, tc39 } from '../support/decorators.js';

// A retry budget is spent from by retries, never run as a step: no builder method or decorator.
const NOT_STEPS = new Set(['retryBudget']);
// A coalescer shares calls by the call's key, which a decorated method's call does not carry:
// no decorator of its own.
const NO_DECORATOR = new Set(['retryBudget', 'coalesce']);

const surfaces = (name: string) => ({
  factory: typeof (factories as Record<string, unknown>)[name] === 'function',
  registry: typeof (Registry.prototype as unknown as Record<string, unknown>)[name] === 'function',
  builder: NOT_STEPS.has(name)
    ? 'not a step'
    : typeof (PipelineBuilder.prototype as unknown as Record<string, unknown>)[name] === 'function',
});

describe('every library kind is built the same way', () => {
  it.each(POLICY_KINDS.map((k) => [k.name, k] as const))(
    '%s has a factory, a registry accessor, a builder method and a decorator',
    (name, kind) => {
      expect(surfaces(name)).toEqual({
        factory: true,
        registry: true,
        builder: NOT_STEPS.has(name) ? 'not a step' : true,
      });
      const decorator = (decorators as Record<string, unknown>)[kind.decoratorName ?? name];
      expect(typeof decorator).toBe(NO_DECORATOR.has(name) ? 'undefined' : 'function');
    },
  );

  it.each(POLICY_KINDS.filter((k) => k.keyed !== undefined).map((k) => [k.name] as const))(
    '%s, kept per key, has a keyed registry accessor',
    (name) => {
      const accessor = `keyed${name[0]!.toUpperCase()}${name.slice(1)}`;
      const registry = new Registry({ defaults: { rateLimiter: { limit: 1, period: 1_000 } } });
      const get = (registry as unknown as Record<string, (n: string, k: string) => object>)[
        accessor
      ];
      expect(typeof get).toBe('function');
      const kind = POLICY_KINDS.find((k) => k.name === name)!;
      const one = get!.call(registry, 'api', 'a');
      expect(kind.is(one)).toBe(true);
      expect(registry.getKeyed(name, 'api', 'a')).toBe(one);
    },
  );

  it('the registry accessor of every kind is its named instance', () => {
    const registry = new Registry({
      defaults: { rateLimiter: { limit: 1, period: 1_000 }, timeout: { timeout: '1s' } },
    });
    for (const kind of POLICY_KINDS) {
      const get = (registry as unknown as Record<string, (n: string) => object>)[kind.name]!;
      expect(get.call(registry, 'x'), kind.name).toBe(registry.get(kind, 'x'));
    }
  });

  it('the kind table holds every library kind, in the order of the list', () => {
    expect(Object.keys(LIBRARY_KINDS)).toEqual(POLICY_KINDS.map((k) => k.name));
    for (const kind of POLICY_KINDS) {
      const entry = LIBRARY_KINDS[kind.name as keyof typeof LIBRARY_KINDS];
      expect(entry.kind).toBe(kind);
      expect(entry.step).toBe(!NOT_STEPS.has(kind.name));
    }
  });

  it('the builder adds a new instance from options, or the instance it is given', async () => {
    const shared = factories.hedge({ delay: 1_000 });
    const p = new PipelineBuilder()
      .hedge(shared)
      .adaptiveLimit({ initialLimit: 4 })
      .loadShedder<{ status: number }>({ handleResult: (r) => r.status === 503 })
      .timeout('1s')
      .build();
    // @ts-expect-error a rate limiter is built from its options, which it needs
    expect(() => new PipelineBuilder().rateLimiter()).toThrow(OptionsError);
    expect(p.policies[0]).toBe(shared);
    expect(p.policies.map((policy) => policy.constructor.name)).toEqual([
      'Hedge',
      'AdaptiveLimit',
      'LoadShedder',
      'Timeout',
    ]);
    await expect(p.execute(async () => ({ status: 200 }))).resolves.toEqual({ status: 200 });
  });

  it('the decorators of every step kind run a method through their kind', async () => {
    const limit = factories.adaptiveLimit({ initialLimit: 2 });
    let method: Fn = async (n) => (n as number) * 2;
    method = tc39(decorators.loadShedder(), method);
    method = tc39(decorators.adaptiveLimit(limit), method);
    method = tc39(decorators.hedge({ delay: 1_000 }), method);
    await expect(method(21)).resolves.toBe(42);
  });
});
