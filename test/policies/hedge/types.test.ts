/**
 * The result types of hedge options and of the pipelines holding them, checked by
 * `npm run typecheck` (every `@ts-expect-error` must meet an error); the tests also run.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ExecutionContext,
  type Hedge,
  hedge,
  type Pipeline,
  pipeline,
} from '../../../src/index.js';

interface Reply {
  readonly status: number;
}

describe('Hedge result types', () => {
  it('infers the result type from an annotated handleResult, and types the pipeline by it', async () => {
    const h = hedge({ delay: 'on-failure', handleResult: (r: Reply) => r.status >= 500 });
    expectTypeOf(h).toEqualTypeOf<Hedge<Reply>>();
    const p = pipeline(h);
    expectTypeOf(p).toEqualTypeOf<Pipeline<Reply>>();
    expect(await p.execute(() => ({ status: 200 }))).toEqual({ status: 200 });
    // @ts-expect-error a function whose result is not a Reply
    await p.execute(() => 'text');
  });

  it('tells the function which attempt of the hedge it runs', () => {
    expectTypeOf<ExecutionContext['hedge']>().toEqualTypeOf<number>();
  });
});
