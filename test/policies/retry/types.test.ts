/**
 * The result types of retry options and of the pipelines holding them. The type assertions are
 * checked by `npm run typecheck` (every `@ts-expect-error` must meet an error); the tests also
 * run, so each line is code that works.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AttemptFailure,
  CircuitBreaker,
  type GiveUpEvent,
  type Pipeline,
  PipelineBuilder,
  pipeline,
  type Retry,
  type RetryEvent,
  RetryExhaustedError,
  retry,
  timeout,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

interface Reply {
  readonly status: number;
  readonly retryAfterMs?: number;
}

const reply = (status: number): Reply => ({ status });

describe('Retry result types', () => {
  it('infers the result type from an annotated handleResult, and types retryAfter by it', () => {
    const policy = retry({
      handleResult: (r: Reply) => r.status >= 500,
      retryAfter: ({ result }) => result?.retryAfterMs,
    });
    expectTypeOf(policy).toEqualTypeOf<Retry<Reply>>();
    expectTypeOf(policy.onRetry).parameter(0).parameter(0).toEqualTypeOf<RetryEvent<Reply>>();
    expectTypeOf(policy.onGiveUp).parameter(0).parameter(0).toEqualTypeOf<GiveUpEvent<Reply>>();
  });

  it('takes the result type as a type argument', () => {
    const policy = retry<Reply>({
      handleResult: (r) => {
        expectTypeOf(r).toEqualTypeOf<Reply>();
        return r.status === 503;
      },
      retryAfter: (failure) => {
        expectTypeOf(failure).toEqualTypeOf<AttemptFailure<Reply>>();
        return failure.result?.retryAfterMs;
      },
    });
    expect(policy.name).toBe('retry');
  });

  it('makes a handleResult of another type a type error', () => {
    // @ts-expect-error a string predicate cannot judge a Reply
    retry<Reply>({ handleResult: (r: string) => r.length > 0 });
    // @ts-expect-error a Reply has no `statusCode`
    retry<Reply>({ handleResult: (r) => r.statusCode >= 500 });
    retry({
      handleResult: (r: Reply) => r.status >= 500,
      // @ts-expect-error the result of retryAfter's failure is a Reply, which has no `headers`
      retryAfter: ({ result }) => result?.headers,
    });
  });

  it('keeps results unknown when no type is given', () => {
    const policy = retry({ handleResult: (r) => r === 'busy' });
    expectTypeOf(policy).toEqualTypeOf<Retry<unknown>>();
    const p = pipeline(policy, new CircuitBreaker());
    expectTypeOf(p).toEqualTypeOf<Pipeline<unknown>>();
    expectTypeOf(p.execute(async () => 'any')).toEqualTypeOf<Promise<string>>();
  });
});

describe('Pipeline result types', () => {
  it('a pipeline holding a Retry<Reply> runs functions returning a Reply, and returns it', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      retry<Reply>({ clock, handleResult: (r) => r.status === 503 }),
      new CircuitBreaker({ clock }),
      timeout({ timeout: 1_000, clock }),
    );
    expectTypeOf(p).toEqualTypeOf<Pipeline<Reply>>();
    const value = p.execute(async () => reply(200));
    expectTypeOf(value).toEqualTypeOf<Promise<Reply>>();
    expect(await value).toEqual({ status: 200 });
    expectTypeOf(p.tryExecute(() => reply(200))).resolves.toMatchTypeOf<
      { ok: true; value: Reply } | { ok: false; error: unknown }
    >();
  });

  it('a pipeline holding a Retry<Reply> refuses a function returning something else', () => {
    const p = pipeline(retry<Reply>({ handleResult: (r) => r.status === 503 }));
    const wrong = () => {
      // @ts-expect-error the retry judges Replies; a string is not one
      p.execute(async () => 'text');
      // @ts-expect-error the same for tryExecute
      p.tryExecute(() => 42);
    };
    expect(typeof wrong).toBe('function');
  });

  it('a typed pipeline is still a Pipeline where any pipeline is taken', () => {
    const p: Pipeline = pipeline(retry<Reply>({ handleResult: (r) => r.status === 503 }));
    expect(p.policies).toHaveLength(1);
  });

  it('a pipeline built from an array of policies keeps results unknown', () => {
    const policies = [new CircuitBreaker(), retry()];
    expectTypeOf(pipeline(...policies)).toEqualTypeOf<Pipeline<unknown>>();
  });

  it('the builder accepts a typed retry, options or instance', () => {
    const built = new PipelineBuilder()
      .retry<Reply>({ handleResult: (r) => r.status === 503 })
      .retry(retry({ handleResult: (r: Reply) => r.status === 429 }))
      .build();
    expect(built.policies).toHaveLength(2);
  });

  it('RetryExhaustedError carries a typed result', () => {
    const error = new RetryExhaustedError('api', reply(503), 3, 'max-attempts');
    expectTypeOf(error.result).toEqualTypeOf<Reply>();
    expect(error.result.status).toBe(503);
  });
});
