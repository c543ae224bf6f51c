/**
 * A gate may answer a call with a value of its own: the stub kind of test/support (defined with
 * the public protocol alone and given to registries with their `kinds` option) answers, faults,
 * admits and makes calls wait on every execution path of a pipeline, and reaches every surface:
 * the registry by name and key, config data, snapshots, Prometheus metrics, `/health`,
 * `/metrics` and the dashboard's data, decorators and OpenTelemetry span events.
 */
import { Registry as PromRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { kindDecorator } from '../../src/decorators/index.js';
import { rejectionReached } from '../../src/errors/PolicyRejectedError.js';
import {
  CircuitState,
  circuitBreaker,
  fallback,
  hedge,
  OptionsError,
  pipeline,
  Registry,
  type RegistryConfig,
  retry,
  timeout,
  UsageError,
} from '../../src/index.js';
import { createObservabilityHandler, type HealthReport } from '../../src/observability/index.js';
import { traceBreakwaterEvents } from '../../src/opentelemetry/index.js';
import { registerBreakwaterMetrics } from '../../src/prometheus/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { firstSnapshot, serve } from '../observability/support.js';
import { startTracing } from '../opentelemetry/tracing.js';
import {
  InjectedFaultError,
  resolveStubOptions,
  Stub,
  StubBusyError,
  type StubOptions,
  stubFamilies,
  stubKind,
} from '../support/answeringKind.js';
import { deferred } from '../support/async.js';
import { tc39 } from '../support/decorators.js';
import { errorOf } from '../support/errors.js';

const ANSWER = { cached: true };

function stub(options: StubOptions = {}): Stub {
  return new Stub(resolveStubOptions({ answer: ANSWER, ...options }));
}

/** A function that counts its calls and returns `value`. */
function counted<T>(value: T) {
  const fn = () => {
    fn.calls++;
    return value;
  };
  fn.calls = 0;
  return fn;
}

/** A draw source giving `draws` in turn, then 0.99 (a call that passes). */
function draws(...values: number[]): () => number {
  return () => values.shift() ?? 0.99;
}

/** A breaker that opens after two failures in a row, on `clock`. */
function breakerOn(clock: ManualClock) {
  return circuitBreaker({ window: { kind: 'consecutive', threshold: 2 }, clock });
}

describe('a gate that answers, on every execution path', () => {
  it('a lone gate answers execute without calling the function', async () => {
    const fn = counted('real');
    const p = pipeline(stub({ answerRate: 1, maxQueue: 0 }));
    await expect(p.execute(fn)).resolves.toBe(ANSWER);
    await expect(p.tryExecute(fn)).resolves.toEqual({ ok: true, value: ANSWER });
    expect(fn.calls).toBe(0);
  });

  it('a lone gate that times its calls answers too', async () => {
    const s = stub({ answerRate: 1, maxQueue: 0, latencyEvery: 1 });
    const fn = counted('real');
    for (let i = 0; i < 3; i++) await expect(pipeline(s).execute(fn)).resolves.toBe(ANSWER);
    expect(fn.calls).toBe(0);
    expect(s.answered).toBe(3);
  });

  it('in a pipeline of gates alone, the gates outside are released after a success', async () => {
    const outer = stub({ maxQueue: 0 });
    const inner = stub({ answerRate: 1, maxQueue: 0 });
    const p = pipeline(outer, inner);
    const fn = counted('real');
    await expect(p.execute(fn)).resolves.toBe(ANSWER);
    await expect(p.tryExecute(fn)).resolves.toEqual({ ok: true, value: ANSWER });
    expect(fn.calls).toBe(0);
    expect(outer.stats()).toMatchObject({ inFlight: 0, passed: 2 });
    expect(inner.stats()).toMatchObject({ inFlight: 0, passed: 0, answered: 2 });
  });

  it('in the general executor, a breaker outside counts the answer as a success', async () => {
    const clock = new ManualClock();
    const breaker = breakerOn(clock);
    const p = pipeline(timeout({ timeout: 1000, clock }), breaker, stub({ answerRate: 1, clock }));
    const fn = counted('real');
    await expect(p.execute(fn, { criticality: 'critical' })).resolves.toBe(ANSWER);
    await expect(p.tryExecute(fn)).resolves.toEqual({ ok: true, value: ANSWER });
    expect(fn.calls).toBe(0);
    expect(breaker.stats()).toMatchObject({ successes: 2, failures: 0, ignored: 0 });
  });

  it('a breaker outside judges the answer by its handleResult, as the value of a call', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({
      window: { kind: 'consecutive', threshold: 2 },
      handleResult: (v: unknown) => v === ANSWER,
      clock,
    });
    const p = pipeline(breaker, stub({ answerRate: 1, maxQueue: 0, clock }));
    await p.tryExecute(() => 'real');
    await p.tryExecute(() => 'real');
    expect(breaker.state).toBe(CircuitState.Open);
  });

  it('executeSync returns the answer, and releases the gates outside', () => {
    const outer = stub({ maxQueue: 0 });
    const p = pipeline(
      fallback({ value: 'fallback' }),
      outer,
      stub({ answerRate: 1, maxQueue: 0 }),
    );
    const fn = counted('real');
    expect(p.executeSync(fn)).toBe(ANSWER);
    expect(fn.calls).toBe(0);
    expect(outer.stats()).toMatchObject({ inFlight: 0, passed: 1 });
  });

  it('an answer ends a retry, unless its handleResult retries the value', async () => {
    const clock = new ManualClock();
    const fn = counted('real');
    const once = pipeline(
      retry({ maxAttempts: 3, clock }),
      stub({ answerRate: 0.5, clock, random: draws(0.1) }),
    );
    await expect(once.execute(fn)).resolves.toBe(ANSWER);
    expect(fn.calls).toBe(0);

    const again = pipeline(
      retry({
        maxAttempts: 3,
        delay: 10,
        jitter: 'none',
        handleResult: (v) => v === ANSWER,
        clock,
      }),
      stub({ answerRate: 0.5, clock, random: draws(0.1) }),
    );
    const call = again.execute(fn);
    await clock.advanceAsync(10);
    await expect(call).resolves.toBe('real');
    expect(fn.calls).toBe(1);
  });

  it('an attempt of a hedge may be answered', async () => {
    const clock = new ManualClock();
    const fn = counted('real');
    const p = pipeline(hedge({ maxHedges: 1, delay: 50, clock }), stub({ answerRate: 1, clock }));
    await expect(p.execute(fn)).resolves.toBe(ANSWER);
    await expect(p.tryExecute(fn)).resolves.toEqual({ ok: true, value: ANSWER });
    expect(fn.calls).toBe(0);
  });

  it('a call with its own deadline is answered, and leaves no timer behind', async () => {
    const clock = new ManualClock();
    const breaker = breakerOn(clock);
    const p = pipeline(breaker, stub({ answerRate: 1, clock }));
    await expect(p.execute(counted('real'), { timeout: 1_000 })).resolves.toBe(ANSWER);
    expect(clock.pendingTimers).toBe(0);
    expect(breaker.stats()).toMatchObject({ successes: 1 });
  });

  it('a call that waited at a gate outside is answered once admitted', async () => {
    const clock = new ManualClock();
    const outer = stub({ limit: 1, clock });
    const held = deferred<string>();
    const holding = pipeline(outer).execute(() => held.promise);
    const fn = counted('real');
    const call = pipeline(outer, stub({ answerRate: 1, clock })).execute(fn);
    expect(outer.stats().waiting).toBe(1);
    held.resolve('held');
    await holding;
    await expect(call).resolves.toBe(ANSWER);
    expect(fn.calls).toBe(0);
    expect(outer.stats()).toMatchObject({ inFlight: 0, waiting: 0, passed: 2 });
  });

  it('a keyed pipeline answers with the stub of the call’s key', async () => {
    const registry = new Registry(
      { stubs: { cache: { answerRate: 1, answer: 'hit' } } } as unknown as RegistryConfig,
      { kinds: [stubKind] },
    );
    const p = pipeline(breakerOn(new ManualClock()), registry.keyed(stubKind, 'cache'));
    await expect(p.execute(() => 'real', { key: 'user-1' })).resolves.toBe('hit');
    expect(registry.getKeyed<Stub>(stubKind, 'cache', 'user-1').answered).toBe(1);
    registry.dispose();
  });

  it('a decorated method is answered', async () => {
    const decorator = kindDecorator<Stub, StubOptions>(stubKind);
    const method = tc39(decorator({ answerRate: 1, answer: 'hit' }), async () => 'real');
    await expect(method.call({})).resolves.toBe('hit');
  });

  it('a gate declaring mayAnswer without an answer method is no policy', () => {
    const s = stub();
    Object.defineProperty(s, 'answer', { value: undefined });
    expect(() => pipeline(s)).toThrow(OptionsError);
  });
});

describe('a refusal that reached the dependency', () => {
  it('an injected fault is counted by a breaker outside, a full line is not', async () => {
    const clock = new ManualClock();
    const busy = breakerOn(clock);
    const full = stub({ limit: 1, maxQueue: 0, clock });
    const held = deferred<string>();
    const holding = pipeline(full).execute(() => held.promise);
    const p = pipeline(busy, full);
    for (let i = 0; i < 3; i++) {
      expect((await p.tryExecute(() => 'x')).ok === false).toBe(true);
    }
    expect(busy.stats()).toMatchObject({ failures: 0, state: CircuitState.Closed });
    held.resolve('done');
    await holding;

    const faulty = breakerOn(clock);
    const q = pipeline(faulty, stub({ faultRate: 1, clock }));
    const result = await q.tryExecute(() => 'x');
    expect(result.ok === false && result.error).toBeInstanceOf(InjectedFaultError);
    expect(rejectionReached(result.ok === false && result.error)).toBe(true);
    await q.tryExecute(() => 'x');
    expect(faulty.state).toBe(CircuitState.Open);
  });
});

describe('a gate that waits in a public WaitLine', () => {
  it('admits waiting calls in order as permits free, refuses one past maxWait', async () => {
    const clock = new ManualClock();
    const s = stub({ limit: 1, maxWait: 100, clock });
    const p = pipeline(s);
    const first = deferred<string>();
    const order: string[] = [];
    const a = p.execute(() => first.promise);
    const b = p.execute(() => {
      order.push('b');
      return 'b';
    });
    const c = p.execute(() => {
      order.push('c');
      return 'c';
    });
    expect(s.stats()).toMatchObject({ inFlight: 1, waiting: 2 });
    first.resolve('a');
    await expect(a).resolves.toBe('a');
    await expect(b).resolves.toBe('b');
    await expect(c).resolves.toBe('c');
    expect(order).toEqual(['b', 'c']);
    expect(s.stats()).toMatchObject({ inFlight: 0, waiting: 0, passed: 3 });

    const held = deferred<string>();
    const d = p.execute(() => held.promise);
    const late = p.tryExecute(() => 'late');
    await clock.advanceAsync(100);
    const r = await late;
    expect(r.ok === false && r.error).toBeInstanceOf(StubBusyError);
    // No timer outlives the wait it bounds.
    expect(clock.pendingTimers).toBe(0);
    held.resolve('d');
    await d;
    expect(s.stats()).toMatchObject({ inFlight: 0, waiting: 0, refused: 1 });
  });

  it('lets a call whose signal aborts leave the line, and refuses the waiting calls on dispose', async () => {
    const s = stub({ limit: 1, maxWait: 10_000, clock: new ManualClock() });
    const p = pipeline(s);
    const held = deferred<string>();
    const a = p.execute(() => held.promise);
    const abort = new AbortController();
    const b = p.tryExecute(() => 'b', { signal: abort.signal });
    abort.abort(new Error('gone'));
    const rb = await b;
    expect(rb.ok === false && (rb.error as Error).message).toBe('gone');
    expect(s.stats().waiting).toBe(0);
    const c = p.tryExecute(() => 'c');
    s.dispose();
    const rc = await c;
    expect(rc.ok === false && rc.error).toBeInstanceOf(UsageError);
    held.resolve('a');
    await a;
  });
});

describe('the stub kind on every surface', () => {
  const config = {
    defaults: { stub: { limit: 2, maxWait: '2s' } },
    stubs: { cache: { answerRate: 1, answer: 'hit' }, flaky: { faultRate: 1 } },
  } as unknown as RegistryConfig;
  let registry: Registry | undefined;
  afterEach(() => registry?.dispose());

  it('is built by name and key from config data, with errors named by path', () => {
    registry = new Registry(config, { kinds: [stubKind] });
    const cache = registry.get<Stub>('stub', 'cache');
    expect(cache.o).toMatchObject({ limit: 2, maxWait: 2000, answerRate: 1, answer: 'hit' });
    expect(registry.getKeyed<Stub>(stubKind, 'cache', 'k').name).toBe('cache:k');
    const issues = errorOf(
      Error,
      () =>
        new Registry({ stubs: { x: { faultRate: 2, random: 1 } } } as unknown as RegistryConfig, {
          kinds: [stubKind],
        }),
    ) as unknown as { issues: { path: string }[] };
    expect(issues.issues.map((i) => i.path).sort()).toEqual([
      'stubs.x.faultRate',
      'stubs.x.random',
    ]);
  });

  it('shows in snapshots and takes new settings from reconfigure()', async () => {
    registry = new Registry(config, { kinds: [stubKind] });
    await pipeline(registry.get(stubKind, 'cache')).execute(() => 'real');
    const snapshot = registry.snapshot().instances.filter((i) => (i.kind as string) === 'stub');
    expect(snapshot).toEqual([
      {
        kind: 'stub',
        name: 'cache',
        state: 'answering',
        stats: { inFlight: 0, waiting: 0, passed: 0, answered: 1, faulted: 0, refused: 0 },
      },
    ]);
    registry.reconfigure({ stubs: { cache: { answerRate: 0 } } } as unknown as RegistryConfig);
    await expect(pipeline(registry.get(stubKind, 'cache')).execute(() => 'real')).resolves.toBe(
      'real',
    );
  });

  it('reports its families through the Prometheus exporter', async () => {
    registry = new Registry(config, { kinds: [stubKind] });
    await pipeline(registry.get(stubKind, 'cache')).execute(() => 'real');
    await pipeline(registry.get(stubKind, 'flaky')).tryExecute(() => 'real');
    const prom = new PromRegistry();
    const stop = registerBreakwaterMetrics(prom, registry);
    const text = await prom.metrics();
    stop();
    expect(text).toContain(`${stubFamilies.answered.name}{name="cache",key=""} 1`);
    expect(text).toContain(`${stubFamilies.faulted.name}{name="flaky",key=""} 1`);
  });

  it('is served on /health, /metrics and the dashboard’s data', async () => {
    registry = new Registry(config, { kinds: [stubKind] });
    await pipeline(registry.get(stubKind, 'cache')).execute(() => 'real');
    registry.get(stubKind, 'flaky');
    const handler = createObservabilityHandler(registry, { interval: 100 });
    const served = await serve((req, res) => handler(req, res));
    try {
      const health = (await (await fetch(`${served.url}/health`)).json()) as HealthReport;
      expect(health.status).toBe('degraded');
      expect(health.instances.map((i) => [i.name, (i as { state?: string }).state])).toEqual([
        ['cache', 'answering'],
        ['flaky', 'faulting'],
      ]);
      const metrics = await (await fetch(`${served.url}/metrics`)).text();
      expect(metrics).toContain(`${stubFamilies.answered.name}{name="cache",key=""} 1`);
      const frame = await firstSnapshot(`${served.url}/events`);
      expect(frame.kinds.stub).toBe('stub');
      expect(frame.instances.find((i) => i.name === 'cache')?.row?.detail).toBe(
        '1 answered, 0 faulted, 0 waiting',
      );
    } finally {
      handler.close();
      await served.close();
    }
  });

  it('adds its answers to the active span as events', async () => {
    const tracing = startTracing();
    const stop = traceBreakwaterEvents({ kinds: [stubKind] });
    try {
      const p = pipeline(stub({ answerRate: 1, name: 'cache' }));
      await tracing.tracer.startActiveSpan('lookup', async (span) => {
        await p.execute(() => 'real');
        span.end();
      });
      expect(tracing.span('lookup').events.map((e) => [e.name, e.attributes])).toEqual([
        ['example.stub.answered', { 'example.stub.name': 'cache' }],
      ]);
    } finally {
      stop();
      await tracing.close();
    }
  });
});
