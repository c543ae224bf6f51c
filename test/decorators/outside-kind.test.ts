/**
 * A policy kind defined outside the library (test/support/concurrencyCapKind.ts: a descriptor
 * with its config schema and keyed group, and a small gate engine admitting at most `limit`
 * calls at once) decorates methods through `kindDecorator` as the library's own kinds do: with
 * options, per object, by registry name from config data, per key, and stacked with the
 * library's decorators.
 */
import { describe, expect, it } from 'vitest';
import { kindDecorator, pipelineOf, retry } from '../../src/decorators/index.js';
import {
  type Duration,
  OptionsError,
  Registry,
  type RegistryConfig,
  Retry,
  UsageError,
} from '../../src/index.js';
import type { KindConfigTypes } from '../../src/kinds/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import {
  type CapOptions,
  CapReachedError,
  ConcurrencyCap,
  concurrencyCapKind as capKind,
} from '../support/concurrencyCapKind.js';
import { type Fn, tc39 } from '../support/decorators.js';
import { errorOf, rejectionOf } from '../support/errors.js';

const concurrencyCap = kindDecorator<ConcurrencyCap, CapOptions>(capKind);

/** The cap's config data, typed. */
type CapConfig = RegistryConfig<{
  concurrencyCap: KindConfigTypes<'concurrencyCaps', { limit?: number; cooldown?: Duration }>;
}>;

/** A registry that knows the cap kind, from config data. */
function capRegistry(): Registry {
  const config: CapConfig = {
    defaults: { concurrencyCap: { limit: 3, cooldown: '2s' } },
    concurrencyCaps: { reports: { limit: 1 } },
  };
  return new Registry(config, { kinds: [capKind] });
}

/** An async method that waits for the test to settle it, and its pending calls. */
function heldMethod() {
  const calls: ReturnType<typeof deferred<string>>[] = [];
  const fn = () => {
    const call = deferred<string>();
    calls.push(call);
    return call.promise;
  };
  return { fn: fn as Fn, calls };
}

/** Two objects with one decorated method on their shared prototype (one class, two objects). */
function twoObjects(method: Fn) {
  const proto = { method };
  return [Object.create(proto), Object.create(proto)] as { method: Fn }[];
}

const capOf = (target: object): ConcurrencyCap => {
  const [cap] = pipelineOf(target, 'method').policies;
  expect(cap).toBeInstanceOf(ConcurrencyCap);
  return cap as unknown as ConcurrencyCap;
};

describe('kindDecorator: the decorator of a kind defined outside the library', () => {
  it('with options: a new instance built where the decorator is written, shared by the class', async () => {
    expect(errorOf(OptionsError, () => concurrencyCap({ limit: 0 })).option).toBe('limit');

    const held = heldMethod();
    const [a, b] = twoObjects(tc39(concurrencyCap({ limit: 1 }), held.fn));
    const first = a!.method();
    await rejectionOf(CapReachedError, () => b!.method());
    held.calls[0]!.resolve('done');
    await expect(first).resolves.toBe('done');
    expect(capOf(a!)).toBe(capOf(b!));
    expect(capOf(a!).stats()).toEqual({ inFlight: 0, limit: 1, admitted: 1, refused: 1 });
  });

  it('on a method not declared async, runs synchronously as a gate that never waits does', () => {
    const [a] = twoObjects(tc39(concurrencyCap({ limit: 1 }), () => 42));
    expect(a!.method()).toBe(42);
    expect(capOf(a!).stats()).toMatchObject({ inFlight: 0, admitted: 1 });
  });

  it('with perInstance: each object gets its own instance', async () => {
    const held = heldMethod();
    const [a, b] = twoObjects(tc39(concurrencyCap({ limit: 1 }, { perInstance: true }), held.fn));
    const calls = [a!.method(), b!.method()];
    await rejectionOf(CapReachedError, () => a!.method());
    for (const call of held.calls) call.resolve('done');
    await expect(Promise.all(calls)).resolves.toEqual(['done', 'done']);
    expect(capOf(a!)).not.toBe(capOf(b!));
  });

  it('by registry name: the instance the registry builds from config data, its entry over the defaults', async () => {
    const registry = capRegistry();
    const held = heldMethod();
    const [a, b] = twoObjects(tc39(concurrencyCap('reports', { registry }), held.fn));
    const first = a!.method();
    await rejectionOf(CapReachedError, () => b!.method());
    held.calls[0]!.resolve('done');
    await first;
    expect(capOf(a!)).toBe(registry.get(capKind, 'reports'));
    expect(capOf(a!).o).toMatchObject({ limit: 1, cooldown: 2_000, name: 'reports' });

    const [other] = twoObjects(tc39(concurrencyCap('exports', { registry }), () => 1));
    expect(other!.method()).toBe(1);
    expect(capOf(other!)).toBe(registry.get(capKind, 'exports'));
    expect(capOf(other!).o).toMatchObject({ limit: 3, cooldown: 2_000 });
    registry.dispose();
  });

  it('per key: one registry instance per key, asked on each call', async () => {
    const registry = capRegistry();
    const calls: ReturnType<typeof deferred<string>>[] = [];
    const method = tc39(concurrencyCap('tenants', { registry, key: (tenant: string) => tenant }), ((
      tenant: string,
    ) => {
      const call = deferred<string>();
      calls.push(call);
      return call.promise.then((v) => `${tenant}:${v}`);
    }) as Fn);
    const self = { method };
    const running = [self.method('a'), self.method('a'), self.method('a'), self.method('b')];
    await rejectionOf(CapReachedError, () => self.method('a'));
    const a = registry.getKeyed(capKind, 'tenants', 'a');
    expect(a.name).toBe('tenants:a');
    expect(a.stats()).toEqual({ inFlight: 3, limit: 3, admitted: 3, refused: 1 });
    expect(registry.getKeyed(capKind, 'tenants', 'b').stats()).toMatchObject({ inFlight: 1 });
    for (const call of calls) call.resolve('ok');
    await expect(Promise.all(running)).resolves.toEqual(['a:ok', 'a:ok', 'a:ok', 'b:ok']);
    expect(a.inFlight).toBe(0);

    const badKey = tc39(concurrencyCap('tenants', { registry, key: () => 7 as never }), () => 1);
    expect(errorOf(UsageError, () => badKey()).message).toBe(
      'The `key` function of concurrencyCap "tenants" must return a string of at most 1024 characters, got number',
    );
    registry.dispose();
  });

  it('stacked under a library decorator: one pipeline, each retry attempt takes a permit', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const inner = tc39(concurrencyCap({ limit: 1 }), async () => {
      attempts++;
      if (attempts < 3) throw new Error('flaky');
      return 'ok';
    });
    const self = { method: tc39(retry({ clock, maxAttempts: 3, delay: 10 }), inner) };
    const [retryPolicy, cap] = pipelineOf(self, 'method').policies;
    expect(retryPolicy).toBeInstanceOf(Retry);
    expect(cap).toBeInstanceOf(ConcurrencyCap);
    const call = self.method();
    await clock.advanceAsync(100);
    await expect(call).resolves.toBe('ok');
    expect(attempts).toBe(3);
    expect((cap as unknown as ConcurrencyCap).stats()).toMatchObject({ inFlight: 0, admitted: 3 });
  });

  it('refuses what the kind does not take, naming the decorator by the kind', async () => {
    const perInstance = errorOf(UsageError, () =>
      concurrencyCap('reports', { perInstance: true } as never),
    );
    expect(perInstance.message).toContain('@concurrencyCap(...)');
    const renamed = kindDecorator({ ...capKind, decoratorName: 'cap' });
    const cap = new ConcurrencyCap({ limit: 1, cooldown: 1, name: 'c', clock: new ManualClock() });
    expect(
      errorOf(UsageError, () => renamed(cap, { perInstance: true } as never)).message,
    ).toContain('@cap(...)');

    const byNameOnly = kindDecorator({ ...capKind, keyed: undefined });
    expect(errorOf(OptionsError, () => byNameOnly('reports', { key: () => 'k' })).option).toBe(
      'key',
    );
    expect(errorOf(OptionsError, () => kindDecorator({} as never)).option).toBe('kind');

    // The default registry was given no kind from outside the library: the first call says so.
    const [a] = twoObjects(tc39(concurrencyCap('reports'), async () => 1));
    const error = await rejectionOf(UsageError, () => a!.method());
    expect(error.message).toContain('"concurrencyCap"');
  });
});
