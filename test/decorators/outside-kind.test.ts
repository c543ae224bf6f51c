/**
 * A policy kind the library does not know, defined here (a descriptor with its config schema
 * and keyed group, and a small gate engine: at most `limit` calls at once), decorates methods
 * through `kindDecorator` as the library's own kinds do: with options, per object, by registry
 * name from config data, per key, and stacked with the library's decorators.
 */
import { describe, expect, it } from 'vitest';
import { kindDecorator, pipelineOf, retry } from '../../src/decorators/index.js';
import {
  type ErrorCode,
  type Gate,
  NEEDS_NOTHING,
  OptionsError,
  Outcome,
  PolicyRejectedError,
  REJECTED,
  Registry,
  type RegistryConfig,
  Retry,
  StepKind,
  type StepNeeds,
  UsageError,
} from '../../src/index.js';
import {
  configSchema,
  type InstanceView,
  type KeyedGroup,
  type KeyedInstancesView,
  type OptionsData,
  type PolicyKindDescriptor,
} from '../../src/protocol/kind.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { type Fn, tc39 } from '../support/decorators.js';
import { errorOf, rejectionOf } from '../support/errors.js';

interface CapOptions {
  /** Calls admitted at once. @default 1 */
  readonly limit?: number;
  readonly name?: string;
}

interface ResolvedCapOptions {
  readonly limit: number;
  readonly name: string;
}

function resolveCap(options: unknown): ResolvedCapOptions {
  const { limit = 1, name = 'cap' } = (options ?? {}) as CapOptions;
  if (!Number.isInteger(limit) || limit < 1)
    throw new OptionsError('limit', limit, 'an integer >= 1');
  return { limit, name };
}

class CapReachedError extends PolicyRejectedError {
  constructor(name: string) {
    super('ERR_EXAMPLE_CAP' as ErrorCode, 'the cap is reached', 'concurrencyCap' as never, name);
  }
}

class ConcurrencyCap implements Gate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery = 0;
  readonly mayWait = false;
  readonly name: string;
  limit: number;
  inFlight = 0;
  readonly outcomes: Outcome[] = [];
  private readonly error: CapReachedError;

  constructor(options?: CapOptions) {
    const { limit, name } = resolveCap(options);
    this.limit = limit;
    this.name = name;
    this.error = new CapReachedError(name);
  }

  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true };
  }
  admit(): number {
    if (this.inFlight >= this.limit) return REJECTED;
    return this.inFlight++;
  }
  release(_token: number, outcome: Outcome): void {
    this.inFlight--;
    this.outcomes.push(outcome);
  }
  releaseSuccess(token: number, value: unknown): void {
    this.release(token, this.classifyResult(value));
  }
  classifyError(): Outcome {
    return Outcome.Failure;
  }
  classifyResult(_value: unknown): Outcome {
    return Outcome.Success;
  }
  rejection(): Error {
    return this.error;
  }
  dispose(): void {}
  stats() {
    return { inFlight: this.inFlight, limit: this.limit };
  }
}

/** The caps of one keyed name: an idle cap holds nothing, so shelving keeps no numbers. */
class CapGroup implements KeyedGroup<ConcurrencyCap, ResolvedCapOptions> {
  readonly stride = 0;
  readonly latency = undefined;
  instances!: KeyedInstancesView<ConcurrencyCap>;

  constructor(
    private readonly name: string,
    public options: ResolvedCapOptions,
  ) {}

  create(key: string): ConcurrencyCap {
    return new ConcurrencyCap({ limit: this.options.limit, name: `${this.name}:${key}` });
  }
  revive(): void {}
  shelve(cap: ConcurrencyCap): boolean {
    return cap.inFlight === 0;
  }
  isProtected(cap: ConcurrencyCap): boolean {
    return cap.inFlight !== 0;
  }
  retire(): void {}
  dispose(): void {}
  check(): void {}
  apply(options: ResolvedCapOptions, keep: readonly ConcurrencyCap[]): void {
    this.options = options;
    for (const cap of keep) cap.limit = options.limit;
  }
  view(cap: ConcurrencyCap | undefined): InstanceView {
    return { stats: cap?.stats() ?? { inFlight: 0, limit: this.options.limit } };
  }
}

const capKind: PolicyKindDescriptor<ConcurrencyCap, ResolvedCapOptions> = {
  name: 'concurrencyCap',
  label: 'concurrency cap',
  section: 'concurrencyCaps',
  is: (value): value is ConcurrencyCap => value instanceof ConcurrencyCap,
  create: (options) => new ConcurrencyCap(options as CapOptions),
  resolve: (data: OptionsData) => resolveCap(data),
  reconfigure: (cap, options) => () => {
    cap.limit = options.limit;
  },
  dispose: (cap) => cap.dispose(),
  view: (cap) => ({ stats: cap.stats() }),
  config: { schema: configSchema([['limit', 'value']]) },
  keyed: (name, options) => new CapGroup(name, options),
};

const concurrencyCap = kindDecorator<ConcurrencyCap, CapOptions>(capKind);

/** A registry that knows the cap kind, from config data. */
function capRegistry(): Registry {
  const config = {
    defaults: { concurrencyCap: { limit: 3 } },
    concurrencyCaps: { reports: { limit: 1 } },
  } as RegistryConfig;
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
    expect(capOf(a!).outcomes).toEqual([Outcome.Success]);
  });

  it('on a method not declared async, runs synchronously as a gate that never waits does', () => {
    const [a] = twoObjects(tc39(concurrencyCap({ limit: 1 }), () => 42));
    expect(a!.method()).toBe(42);
    expect(capOf(a!).inFlight).toBe(0);
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
    expect(capOf(a!).limit).toBe(1);

    const [other] = twoObjects(tc39(concurrencyCap('exports', { registry }), () => 1));
    expect(other!.method()).toBe(1);
    expect(capOf(other!)).toBe(registry.get(capKind, 'exports'));
    expect(capOf(other!).limit).toBe(3);
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
    expect(registry.getKeyed(capKind, 'tenants', 'a').inFlight).toBe(3);
    expect(registry.getKeyed(capKind, 'tenants', 'b').inFlight).toBe(1);
    for (const call of calls) call.resolve('ok');
    await expect(Promise.all(running)).resolves.toEqual(['a:ok', 'a:ok', 'a:ok', 'b:ok']);
    expect(registry.getKeyed(capKind, 'tenants', 'a').outcomes).toEqual([
      Outcome.Success,
      Outcome.Success,
      Outcome.Success,
    ]);

    const badKey = tc39(concurrencyCap('tenants', { registry, key: () => 7 as never }), () => 1);
    expect(errorOf(UsageError, () => badKey()).message).toContain(
      'The `key` function of concurrencyCap "tenants" must return a string',
    );
  });

  it('stacked under a library decorator: one pipeline, each retry attempt takes a permit', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const inner = tc39(concurrencyCap({ limit: 1 }), async () => {
      attempts++;
      if (attempts < 3) throw new Error('flaky');
      return 'ok';
    });
    const method = tc39(retry({ clock, maxAttempts: 3, delay: 10 }), inner);
    const self = { method };
    const [retryPolicy, cap] = pipelineOf(self, 'method').policies;
    expect(retryPolicy).toBeInstanceOf(Retry);
    expect(cap).toBeInstanceOf(ConcurrencyCap);
    const call = self.method();
    await clock.advanceAsync(100);
    await expect(call).resolves.toBe('ok');
    expect((cap as unknown as ConcurrencyCap).outcomes).toEqual([
      Outcome.Failure,
      Outcome.Failure,
      Outcome.Success,
    ]);
  });

  it('refuses what the kind does not take, naming the decorator by the kind', async () => {
    const perInstance = errorOf(UsageError, () =>
      concurrencyCap('reports', { perInstance: true } as never),
    );
    expect(perInstance.message).toContain('@concurrencyCap(...)');
    const named = kindDecorator({ ...capKind, decoratorName: 'cap' });
    expect(
      errorOf(UsageError, () => named(new ConcurrencyCap(), { perInstance: true } as never))
        .message,
    ).toContain('@cap(...)');

    const byNameOnly = kindDecorator({ ...capKind, keyed: undefined });
    expect(errorOf(OptionsError, () => byNameOnly('reports', { key: () => 'k' })).option).toBe(
      'key',
    );
    expect(errorOf(OptionsError, () => kindDecorator({} as never)).option).toBe('kind');

    // The default registry was given no outside kind: the first call says so.
    const [a] = twoObjects(tc39(concurrencyCap('reports'), async () => 1));
    const error = await rejectionOf(UsageError, () => a!.method());
    expect(error.message).toContain('"concurrencyCap"');
  });
});
