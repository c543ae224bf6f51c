import { describe, expect, it } from 'vitest';
import { failureAnswer } from '../../../src/http/server/failures.js';
import {
  bulkhead,
  circuitBreaker,
  pipeline,
  RetryExhaustedError,
  TimeoutError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/** What `execute` of `policy` rejects with when `fn` runs (or is refused). */
async function rejectionOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('it did not reject');
}

function parsed(answer: ReturnType<typeof failureAnswer>) {
  return {
    status: answer?.status,
    retryAfter: answer?.headers.find(([name]) => name === 'retry-after')?.[1],
    body: answer && (JSON.parse(answer.body) as { code?: string; detail?: string }),
  };
}

describe('failureAnswer', () => {
  it('gives a full bulkhead, which carries no wait, the fallback wait rounded up to seconds', async () => {
    const full = pipeline(bulkhead({ maxConcurrent: 1, maxQueue: 0 }));
    let release!: () => void;
    const held = full.execute(() => new Promise<void>((r) => (release = r)));
    const error = await rejectionOf(() => full.execute(async () => 1));
    release();
    await held;
    expect(parsed(failureAnswer(error, 2_300))).toMatchObject({
      status: 503,
      retryAfter: '3',
      body: { code: 'ERR_BREAKWATER_BULKHEAD_FULL' },
    });
  });

  it('gives an isolated breaker (no end to its open period) the fallback wait', async () => {
    const breaker = circuitBreaker({ clock: new ManualClock() });
    breaker.isolate();
    const error = await rejectionOf(() => pipeline(breaker).execute(async () => 1));
    expect(parsed(failureAnswer(error, 1_000))).toMatchObject({
      status: 503,
      retryAfter: '1',
      body: { code: 'ERR_BREAKWATER_CIRCUIT_ISOLATED' },
    });
  });

  it('judges a RetryExhaustedError whose last failure is a timeout as a 504', () => {
    const exhausted = new RetryExhaustedError(
      'retry',
      new TimeoutError('execute', 300),
      2,
      'max-attempts',
    );
    expect(parsed(failureAnswer(exhausted, 1_000))).toMatchObject({
      status: 504,
      body: { code: 'ERR_BREAKWATER_TIMEOUT' },
    });
  });

  it('leaves any other error, and a non-error, to the framework', () => {
    expect(failureAnswer(new Error('boom'), 1_000)).toBeUndefined();
    expect(failureAnswer(new TypeError('fetch failed'), 1_000)).toBeUndefined();
    expect(failureAnswer('a string', 1_000)).toBeUndefined();
    expect(failureAnswer(undefined, 1_000)).toBeUndefined();
  });

  it('never puts the error message in the body', () => {
    const answer = parsed(failureAnswer(new TimeoutError('secret-policy', 300), 1_000));
    expect(answer.status).toBe(504);
    expect(JSON.stringify(answer.body)).not.toContain('secret-policy');
  });
});
