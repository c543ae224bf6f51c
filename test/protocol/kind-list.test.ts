/**
 * The library's kinds come from one list: `LIBRARY_KINDS` (with `KIND_CODES` and, for steps,
 * `STEP_CLASSES`, in the same file). A copy of that file's lists with the stub kind of
 * test/support added is put in place of it, the library is loaded afresh over the copy, and
 * every surface takes the stub as one of its own kinds without a `kinds` option: the registry
 * by name and key, config data, snapshots, metric collection and the Prometheus text, the
 * OpenTelemetry instruments, `/health`, the channel and span-event lists, and the error codes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { firstSnapshot, serve } from '../observability/support.js';
import { startTracing } from '../opentelemetry/tracing.js';
import { stubFamilies, stubKind } from '../support/answeringKind.js';

const STUB_CODES = {
  InjectedFault: 'ERR_EXAMPLE_FAULT',
  StubBusy: 'ERR_EXAMPLE_STUB_BUSY',
} as const;

type Library = typeof import('../../src/index.js');
let lib: Library;
let kinds: typeof import('../../src/policies/kinds.js');
let otel: typeof import('../../src/opentelemetry/names.js');
let spans: typeof import('../../src/opentelemetry/spanEvents.js');
let observability: typeof import('../../src/observability/index.js');

beforeAll(async () => {
  // The stub above was loaded over the real list; what follows loads the library over the copy.
  vi.resetModules();
  vi.doMock('../../src/policies/kindTable.js', async (importOriginal) => {
    const table = await importOriginal<typeof import('../../src/policies/kindTable.js')>();
    return {
      ...table,
      LIBRARY_KINDS: { ...table.LIBRARY_KINDS, stub: { kind: stubKind, step: true } },
      KIND_CODES: { ...table.KIND_CODES, stub: STUB_CODES },
    };
  });
  lib = await import('../../src/index.js');
  kinds = await import('../../src/policies/kinds.js');
  otel = await import('../../src/opentelemetry/names.js');
  spans = await import('../../src/opentelemetry/spanEvents.js');
  observability = await import('../../src/observability/index.js');
});

afterAll(() => {
  vi.doUnmock('../../src/policies/kindTable.js');
  vi.resetModules();
});

/** A registry over the copied list, with one stub from config data and none from `kinds`. */
function registryWithStub() {
  return new lib.Registry({
    defaults: { stub: { answerRate: 0 } },
    stubs: { cache: { limit: 2, maxWait: '50ms' } },
  } as never);
}

describe('a kind added to a copy of the kind list', () => {
  it('is in POLICY_KINDS, after the library kinds, in the order of the list', () => {
    expect(kinds.POLICY_KINDS.at(-1)).toBe(stubKind);
    expect(kinds.POLICY_KINDS.map((k) => k.name)).toEqual([
      'circuitBreaker',
      'retry',
      'retryBudget',
      'timeout',
      'bulkhead',
      'rateLimiter',
      'loadShedder',
      'adaptiveLimit',
      'hedge',
      'coalesce',
      'chaos',
      'stub',
    ]);
  });

  it('has registry accessors by name and by key, built from config data', () => {
    const registry = registryWithStub() as unknown as Record<
      string,
      (...args: string[]) => unknown
    >;
    const cache = registry.stub!('cache') as { readonly name: string };
    expect(cache).toBe(registry.stub!('cache'));
    expect(cache.name).toBe('cache');
    expect(registry.keyedStub!('cache', 'tenant-a')).toBe(registry.keyedStub!('cache', 'tenant-a'));
    expect(registry.keyedStub!('cache', 'tenant-a')).not.toBe(cache);
  });

  it('is in snapshots, collected metrics, the Prometheus text, /health and the dashboard', async () => {
    const registry = new lib.Registry({
      stubs: { cache: { answerRate: 1, answer: 'hit' }, flaky: { faultRate: 1 } },
    } as never);
    const stub = (name: string) =>
      (registry as unknown as { stub(n: string): Parameters<typeof lib.pipeline>[0] }).stub(name);
    await lib.pipeline(stub('cache')).execute(() => 'real');
    stub('flaky');
    expect(registry.snapshot().instances.map((i) => [i.kind, i.name])).toEqual([
      ['stub', 'cache'],
      ['stub', 'flaky'],
    ]);
    const text = lib.prometheusText(lib.collectMetrics(registry));
    expect(text).toContain(`${stubFamilies.answered.name}{name="cache",key=""} 1`);
    const handler = observability.createObservabilityHandler(registry, { interval: 100 });
    const served = await serve((req, res) => handler(req, res));
    try {
      const health = (await (await fetch(`${served.url}/health`)).json()) as {
        status: string;
        instances: { name: string; state?: string }[];
      };
      expect(health.status).toBe('degraded');
      expect(health.instances.map((i) => [i.name, i.state])).toEqual([
        ['cache', 'answering'],
        ['flaky', 'faulting'],
      ]);
      const frame = await firstSnapshot(`${served.url}/events`);
      expect(frame.kinds.stub).toBe('stub');
      expect(frame.instances.find((i) => i.name === 'cache')?.row?.detail).toBe(
        '1 answered, 0 faulted, 0 waiting',
      );
    } finally {
      handler.close();
      await served.close();
      registry.dispose();
    }
  });

  it('has its span events added by traceBreakwaterEvents with no kinds option', async () => {
    const tracing = startTracing();
    const stop = spans.traceBreakwaterEvents();
    const registry = new lib.Registry({ stubs: { cache: { answerRate: 1 } } } as never);
    try {
      const p = lib.pipeline(
        (registry as unknown as { stub(n: string): Parameters<typeof lib.pipeline>[0] }).stub(
          'cache',
        ),
      );
      await tracing.tracer.startActiveSpan('lookup', async (span) => {
        await p.execute(() => 'real');
        span.end();
      });
      expect(tracing.span('lookup').events.map((e) => e.name)).toEqual(['example.stub.answered']);
    } finally {
      stop();
      registry.dispose();
      await tracing.close();
    }
  });

  it('has OpenTelemetry instruments for its metric families', () => {
    expect(Object.keys(otel.otelInstruments)).toContain(stubFamilies.answered.name);
  });

  it('is read by the channel and span-event lists, and its codes are in ErrorCode', () => {
    expect(lib.diagnosticsChannels).toEqual(kinds.channelsOf(kinds.POLICY_KINDS));
    expect(spans.spanEventNames).toEqual(kinds.spanEventsOf(kinds.POLICY_KINDS));
    expect(kinds.POLICY_KINDS.flatMap((k) => k.spanEvents ?? []).map((e) => e.name)).toContain(
      'example.stub.answered',
    );
    expect(lib.ErrorCode).toMatchObject(STUB_CODES);
    expect(lib.ErrorCode.CircuitOpen).toBe('ERR_BREAKWATER_CIRCUIT_OPEN');
  });
});
