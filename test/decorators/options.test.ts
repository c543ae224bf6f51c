/**
 * What the decorators check when they are written, and the calling conventions, tested by
 * calling the decorator functions by hand the way each decorator mode calls them (the compiled
 * forms run in the *-standard / *-legacy test files).
 */
import { describe, expect, it } from 'vitest';
import {
  bulkhead,
  circuitBreaker,
  fallback,
  pipelineOf,
  retry,
  timeout,
  usePipeline,
} from '../../src/decorators/index.js';
import {
  BrokenCircuitError,
  CircuitBreaker,
  OptionsError,
  pipeline,
  Registry,
  Retry,
  UsageError,
} from '../../src/index.js';
import { type Fn, legacy, tc39 } from '../support/decorators.js';
import { errorOf } from '../support/errors.js';

const failing = () => {
  throw new Error('down');
};

describe('options are checked where the decorator is written', () => {
  it('bad policy options throw OptionsError at once, naming the option', () => {
    const error = errorOf(Error, () => circuitBreaker({ breakDuratoin: 5 } as never));
    expect(error).toBeInstanceOf(OptionsError);
    expect(error.message).toContain('did you mean `breakDuration`?');
    expect(errorOf(Error, () => timeout(-1))).toBeInstanceOf(OptionsError);
    expect((errorOf(Error, () => retry({ maxAttempts: 0 })) as OptionsError).option).toBe(
      'maxAttempts',
    );
  });

  it.each([[-1], [1.5], ['first'], [true]])('signal: %s is refused', (signal) => {
    const error = errorOf(Error, () => retry({}, { signal: signal as never }));
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).option).toBe('signal');
  });

  it('perInstance must be a boolean and only goes with options', () => {
    expect(
      (errorOf(Error, () => retry({}, { perInstance: 1 as never })) as OptionsError).option,
    ).toBe('perInstance');
    const named = errorOf(Error, () => circuitBreaker('payments', { perInstance: true } as never));
    expect(named).toBeInstanceOf(UsageError);
    expect(named.message).toContain('registry name stands for one shared instance');
    const object = errorOf(Error, () => bulkhead(circuitBreaker as never));
    expect(object).toBeInstanceOf(OptionsError);
    const policy = errorOf(Error, () =>
      circuitBreaker(new CircuitBreaker(), { perInstance: true } as never),
    );
    expect(policy).toBeInstanceOf(UsageError);
  });

  it('key goes with a registry name of a breaker or bulkhead only, and must be a function', () => {
    const withOptions = errorOf(Error, () => circuitBreaker({}, { key: () => 'k' } as never));
    expect(withOptions).toBeInstanceOf(OptionsError);
    expect((withOptions as OptionsError).option).toBe('key');
    const onRetry = errorOf(Error, () => retry('standard', { key: () => 'k' } as never));
    expect((onRetry as OptionsError).option).toBe('key');
    const notFunction = errorOf(Error, () => bulkhead('pools', { key: 'tenant' as never }));
    expect((notFunction as OptionsError).option).toBe('key');
  });

  it('registry must be a registry, and a name must not be empty', () => {
    const error = errorOf(Error, () => circuitBreaker('payments', { registry: {} as never }));
    expect((error as OptionsError).option).toBe('registry');
    expect((errorOf(Error, () => retry('')) as OptionsError).option).toBe('name');
  });

  it('usePipeline needs a Pipeline; fallbacks have no registry names', () => {
    expect((errorOf(Error, () => usePipeline([] as never)) as OptionsError).option).toBe(
      'pipeline',
    );
    expect(errorOf(Error, () => fallback('cached' as never))).toBeInstanceOf(OptionsError);
  });

  it('stacked decorators that disagree on the signal argument are refused', () => {
    const inner = tc39(retry({}, { signal: 0 }), async () => 1);
    const error = errorOf(Error, () => tc39(circuitBreaker({}, { signal: 1 }), inner));
    expect((error as OptionsError).option).toBe('signal');
    // Agreeing (or leaving it unset) is fine.
    expect(() => tc39(circuitBreaker({}, { signal: 0 }), inner)).not.toThrow();
    expect(() => tc39(circuitBreaker(), inner)).not.toThrow();
  });

  it('a decorator called with arguments no decorator mode gives is refused', () => {
    const decorator = circuitBreaker() as unknown as (...args: unknown[]) => unknown;
    expect(errorOf(Error, () => decorator())).toBeInstanceOf(UsageError);
    expect(errorOf(Error, () => decorator({}, 'method', 0)).message).toContain('is a parameter');
    expect(
      errorOf(Error, () => decorator(() => 1, { kind: 'accessor', name: 'x' })).message,
    ).toContain('`x` is an accessor');
  });
});

describe('calling conventions', () => {
  it('a TC39 call returns a replacement with the method’s name and length', () => {
    function charge(this: { id: string }, amount: unknown, currency: unknown) {
      return `${this.id}:${amount}${currency}`;
    }
    const wrapped = tc39(circuitBreaker(), charge as Fn, 'charge');
    expect(wrapped).not.toBe(charge);
    expect(wrapped.name).toBe('charge');
    expect(wrapped.length).toBe(2);
    expect(wrapped.call({ id: 'a' }, 5, '€')).toBe('a:5€');
  });

  it('the method gets exactly the arguments of the call, however many, for every arity', async () => {
    // The wrapper has a fast path per arity for methods of up to three parameters.
    // biome-ignore-start lint/complexity/noArguments: the arguments object is what is checked
    const sync = [
      function (this: unknown) {
        return [this, [...arguments]];
      },
      function (this: unknown, _a: unknown) {
        return [this, [...arguments]];
      },
      function (this: unknown, _a: unknown, _b: unknown) {
        return [this, [...arguments]];
      },
      function (this: unknown, _a: unknown, _b: unknown, _c: unknown) {
        return [this, [...arguments]];
      },
      function (this: unknown, _a: unknown, _b: unknown, _c: unknown, _d: unknown) {
        return [this, [...arguments]];
      },
    ] as Fn[];
    const later = [
      async function (this: unknown) {
        return [this, [...arguments]];
      },
      async function (this: unknown, _a: unknown) {
        return [this, [...arguments]];
      },
      async function (this: unknown, _a: unknown, _b: unknown) {
        return [this, [...arguments]];
      },
      async function (this: unknown, _a: unknown, _b: unknown, _c: unknown) {
        return [this, [...arguments]];
      },
      async function (this: unknown, _a: unknown, _b: unknown, _c: unknown, _d: unknown) {
        return [this, [...arguments]];
      },
    ] as Fn[];
    // biome-ignore-end lint/complexity/noArguments: the arguments object is what is checked
    const self = { id: 'self' };
    for (let arity = 0; arity <= 4; arity++) {
      const wrappedSync = tc39(circuitBreaker(), sync[arity]!);
      const wrappedLater = tc39(retry({ maxAttempts: 1 }), later[arity]!);
      expect(wrappedSync.length).toBe(arity);
      for (let n = 0; n <= 5; n++) {
        const args = Array.from({ length: n }, (_, i) => `arg${i}`);
        expect(wrappedSync.apply(self, args), `arity ${arity}, ${n} arguments`).toEqual([
          self,
          args,
        ]);
        await expect(wrappedLater.apply(self, args)).resolves.toEqual([self, args]);
      }
    }
  });

  it('a legacy call replaces the descriptor’s value and keeps its other attributes', () => {
    const descriptor = { value: () => 'v', writable: true, enumerable: false, configurable: true };
    const result = legacy(circuitBreaker(), descriptor);
    expect(result).toBe(descriptor);
    expect(result.value).not.toBe(undefined);
    expect((result.value as Fn)()).toBe('v');
    expect(result.enumerable).toBe(false);
  });

  it('legacy accessors and fields are refused, naming what they are', () => {
    expect(errorOf(Error, () => legacy(retry(), { get: () => 1 }, 'g')).message).toContain(
      '`g` is a getter',
    );
    expect(errorOf(Error, () => legacy(retry(), { set: () => {} }, 's')).message).toContain(
      '`s` is a setter',
    );
    expect(
      errorOf(Error, () => legacy(retry(), { get: () => 1, set: () => {} }, 'a')).message,
    ).toContain('`a` is an accessor');
    expect(errorOf(Error, () => legacy(retry(), undefined, 'f')).message).toContain(
      '`f` is a field',
    );
  });

  it('stacked hand-applied decorators give one pipeline, outermost applied last', () => {
    const breaker = new CircuitBreaker();
    const inner = tc39(circuitBreaker(breaker), async () => 'ok');
    const outer = tc39(retry({ maxAttempts: 2 }), inner);
    const target = { method: outer };
    const { policies } = pipelineOf(target, 'method');
    expect(policies).toHaveLength(2);
    expect(policies[0]).toBeInstanceOf(Retry);
    expect(policies[1]).toBe(breaker);
  });

  it('another decorator in between splits the stack into two nested pipelines', async () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const inner = tc39(circuitBreaker(breaker), failing);
    const logged = function (this: unknown, ...args: unknown[]) {
      return inner.apply(this, args);
    };
    const outer = tc39(fallback({ value: 'fallback' }), logged);
    const target = { outer, inner };
    expect(pipelineOf(target, 'outer').policies).toHaveLength(1);
    expect(pipelineOf(target, 'inner').policies).toEqual([breaker]);
    expect(target.outer()).toBe('fallback');
    expect(breaker.state).toBe('open');
  });

  it('a perInstance method called without an object fails: thrown when sync, rejected when async', async () => {
    const sync = tc39(circuitBreaker({}, { perInstance: true }), () => 1, 'sync');
    const error = errorOf(Error, () => sync.call(undefined));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain('`sync` has per-instance policies');
    const asyncFn = tc39(circuitBreaker({}, { perInstance: true }), async () => 1, 'later');
    await expect(asyncFn.call(undefined)).rejects.toThrow(UsageError);
  });

  it('pipelineOf refuses a method without decorators', () => {
    expect(errorOf(Error, () => pipelineOf({ plain() {} }, 'plain'))).toBeInstanceOf(UsageError);
  });

  it('a usePipeline method shares the pipeline’s breaker with direct calls', async () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const shared = pipeline(breaker);
    const method = tc39(usePipeline(shared), failing);
    expect(() => method()).toThrow('down');
    await expect(shared.execute(() => 'direct')).rejects.toBeInstanceOf(BrokenCircuitError);
  });
});

describe('per-key instances', () => {
  it('the key function gets `this` and every argument', async () => {
    const registry = new Registry();
    const seen: unknown[] = [];
    const method = tc39(
      circuitBreaker('hosts', {
        registry,
        key(this: unknown, ...args: unknown[]) {
          seen.push(this, ...args);
          return 'k';
        },
      }),
      async (host: unknown) => host,
    );
    const self = { name: 'client' };
    await expect(method.call(self, 'h', 2)).resolves.toBe('h');
    expect(seen).toEqual([self, 'h', 2]);
  });

  it('a key that is not a string fails the call: rejected for an async method', async () => {
    const registry = new Registry();
    const method = tc39(
      circuitBreaker('hosts', { registry, key: () => 42 as never }),
      async () => 1,
      'fetch',
    );
    await expect(method()).rejects.toThrow(
      /must return a string of at most 1024 characters, got number/,
    );
  });

  it('a key longer than 1,024 characters fails the call with a UsageError saying so', async () => {
    const registry = new Registry();
    const method = tc39(
      circuitBreaker('hosts', { registry, key: (host: string) => host }),
      async (host: unknown) => host,
      'fetch',
    );
    await expect(method('h'.repeat(1024))).resolves.toBe('h'.repeat(1024));
    const error = await (method('h'.repeat(5000)) as Promise<unknown>).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      'The `key` function of circuitBreaker "hosts" must return a string of at most 1024 characters, got a string of 5000 characters',
    );
    expect(registry.snapshot().instances).toHaveLength(1);
  });

  it('a key function that throws fails the call with its error: thrown for a sync method', () => {
    const registry = new Registry();
    const method = tc39(
      bulkhead('pools', {
        registry,
        key: () => {
          throw new RangeError('no tenant');
        },
      }),
      () => 1,
    );
    expect(() => method()).toThrow('no tenant');
  });

  it('pipelineOf refuses a method whose policies are per key', () => {
    const method = tc39(
      circuitBreaker('hosts', { registry: new Registry(), key: () => 'k' }),
      () => 1,
    );
    expect(errorOf(Error, () => pipelineOf({ method }, 'method')).message).toContain(
      'per-key policies',
    );
  });
});
