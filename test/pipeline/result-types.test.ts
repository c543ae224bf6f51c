/**
 * The result types a breaker and a fallback judge, and how a pipeline reads them from its
 * policies. Checked by `npm run typecheck` (every `@ts-expect-error` must meet an error); the
 * tests also run. The retry's are in test/policies/retry/types.test.ts.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CircuitBreaker,
  circuitBreaker,
  type Fallback,
  type FallbackFailure,
  fallback,
  type Pipeline,
  PipelineBuilder,
  pipeline,
  retry,
} from '../../src/index.js';

interface Reply {
  readonly status: number;
}

describe('CircuitBreaker result types', () => {
  it('infers the result type from an annotated handleResult, or takes it as a type argument', () => {
    const inferred = circuitBreaker({ handleResult: (r: Reply) => r.status >= 500 });
    expectTypeOf(inferred).toEqualTypeOf<CircuitBreaker<Reply>>();
    const given = circuitBreaker<Reply>({
      handleResult: (r) => {
        expectTypeOf(r).toEqualTypeOf<Reply>();
        return r.status >= 500;
      },
    });
    expectTypeOf(given).toEqualTypeOf<CircuitBreaker<Reply>>();
    // @ts-expect-error a Reply has no `ok`
    circuitBreaker<Reply>({ handleResult: (r) => !r.ok });
  });

  it('a breaker counts a result its typed handleResult calls a failure', async () => {
    const breaker = circuitBreaker({
      window: { kind: 'consecutive', threshold: 1 },
      handleResult: (r: Reply) => r.status === 503,
    });
    const p = pipeline(breaker);
    expectTypeOf(p).toEqualTypeOf<Pipeline<Reply>>();
    expect(await p.execute(async () => ({ status: 503 }))).toEqual({ status: 503 });
    expect(breaker.state).toBe('open');
  });

  it('a pipeline of a typed retry and a typed breaker requires both result types', () => {
    const p = pipeline(
      retry({ handleResult: (r: Reply) => r.status === 503 }),
      circuitBreaker({ handleResult: (r: { readonly ok: boolean }) => !r.ok }),
    );
    expectTypeOf(p).toEqualTypeOf<Pipeline<Reply & { readonly ok: boolean }>>();
    const wrong = () => {
      // @ts-expect-error the breaker also judges `ok`, which this result lacks
      p.execute(async () => ({ status: 200 }));
    };
    expect(typeof wrong).toBe('function');
  });

  it('the builder accepts a typed breaker, options or instance', () => {
    const built = new PipelineBuilder()
      .circuitBreaker<Reply>({ handleResult: (r) => r.status === 503 })
      .circuitBreaker(circuitBreaker({ handleResult: (r: Reply) => r.status === 429 }))
      .build();
    expect(built.policies).toHaveLength(2);
  });
});

describe('Fallback result types', () => {
  it('types handleResult and the failure given to action by the result it judges', async () => {
    const policy = new PipelineBuilder()
      .fallback({
        handleResult: (r: Reply) => r.status >= 500,
        action: (failure) => {
          expectTypeOf(failure).toEqualTypeOf<FallbackFailure<Reply>>();
          return { status: failure.result === undefined ? 0 : 200 };
        },
      })
      .build();
    expect(await policy.execute(async () => ({ status: 503 }))).toEqual({ status: 200 });
  });

  it('keeps the value type and the judged result type apart', async () => {
    const policy = fallback({ value: null, handleResult: (r: Reply) => r.status >= 500 });
    expectTypeOf(policy).toEqualTypeOf<Fallback<null, Reply>>();
    const p = pipeline(policy);
    expectTypeOf(p).toEqualTypeOf<Pipeline<Reply>>();
    expect(await p.execute(async () => ({ status: 503 }))).toBe(null);
  });

  it('a fallback without handleResult leaves the pipeline untyped', async () => {
    const p = pipeline(fallback({ value: [] }), circuitBreaker());
    expectTypeOf(p).toEqualTypeOf<Pipeline<unknown>>();
    expect(await p.execute(async () => ['item'])).toEqual(['item']);
  });
});

describe('the result type of a pipeline with a fallback', () => {
  it("execute resolves the function's value or the fallback's", async () => {
    const p = pipeline(fallback({ value: 'foo' }), circuitBreaker());
    const result = p.execute(() => 1234);
    expectTypeOf(result).toEqualTypeOf<Promise<number | string>>();
    const narrowed: number | string = await p.execute(() => {
      throw new Error('down');
    });
    expect(narrowed).toBe('foo');
    const wrong = () => {
      // @ts-expect-error the fallback may resolve 'foo', which is no number
      const n: Promise<number> = p.execute(() => 1234);
      return n;
    };
    expect(typeof wrong).toBe('function');
  });

  it('a null value over an object-returning call is typed as the object or null', async () => {
    const p = pipeline(fallback({ value: null, handleResult: (r: Reply) => r.status >= 500 }));
    const result = await p.execute(async () => ({ status: 503 }));
    expectTypeOf(result).toEqualTypeOf<{ status: number } | null>();
    expect(result).toBe(null);
  });

  it("tryExecute and executeSync carry the fallback's value too, and an action's return type", async () => {
    const p = pipeline(fallback({ action: () => 0 as const }), circuitBreaker());
    expectTypeOf(p.executeSync(() => 'text')).toEqualTypeOf<string | 0>();
    const r = await p.tryExecute(async () => 'text');
    if (r.ok) expectTypeOf(r.value).toEqualTypeOf<string | 0>();
    expect(r).toEqual({ ok: true, value: 'text' });
  });

  it('every fallback of a pipeline adds its value', () => {
    const p = pipeline(fallback({ value: false }), fallback({ value: null }), circuitBreaker());
    expectTypeOf(p.execute(() => 1)).toEqualTypeOf<Promise<number | boolean | null>>();
  });

  it("a pipeline without a fallback resolves the function's own type", () => {
    const p = pipeline(circuitBreaker());
    expectTypeOf(p.execute(() => 1)).toEqualTypeOf<Promise<number>>();
  });

  it("the builder carries the fallback's value type", () => {
    const built = new PipelineBuilder().fallback({ value: 'foo' }).circuitBreaker().build();
    expectTypeOf(built.execute(() => 1234)).toEqualTypeOf<Promise<number | string>>();
    const plain = new PipelineBuilder().circuitBreaker().build();
    expectTypeOf(plain.execute(() => 1234)).toEqualTypeOf<Promise<number>>();
  });
});
