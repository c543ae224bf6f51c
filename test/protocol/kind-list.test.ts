/**
 * The library's kinds come from one list: `LIBRARY_KINDS` (with `KIND_CODES` and, for steps,
 * `STEP_CLASSES`, in the same file). A copy of that file's lists with the stub kind of
 * test/support added is put in place of it, the library is loaded afresh over the copy, and
 * every surface takes the stub as one of its own kinds without a `kinds` option: the registry
 * by name and key, config data, snapshots, metric collection and the Prometheus text, the
 * OpenTelemetry instruments, `/health`, the channel and span-event lists, and the error codes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
let health: typeof import('../../src/observability/health.js');

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
  health = await import('../../src/observability/health.js');
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

  it('is in snapshots, collected metrics, the Prometheus text and /health', () => {
    const registry = registryWithStub();
    (registry as unknown as { stub(n: string): unknown }).stub('cache');
    expect(registry.snapshot().instances.some((i) => i.kind === ('stub' as never))).toBe(true);
    const text = lib.prometheusText(lib.collectMetrics(registry));
    expect(text).toContain(`# TYPE ${stubFamilies.answered.name} counter`);
    const { body } = health.healthReport(registry, new Set(), 100);
    expect(JSON.stringify(body)).toContain('"kind":"stub"');
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
