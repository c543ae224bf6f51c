import { afterEach, describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  type CircuitBreakerOptions,
  isTimeoutError,
  type Pipeline,
  pipeline,
  setListenerErrorHandler,
  Timeout,
  TimeoutError,
} from '../../../src/index.js';
import { breakerOnClock } from '../../support/breaker.js';

const make = (options: CircuitBreakerOptions = {}) =>
  breakerOnClock({
    window: { kind: 'consecutive', threshold: 1 },
    breakDuration: 1000,
    ...options,
  });

function throwing(p: Pipeline, error: unknown): void {
  let thrown: unknown;
  try {
    p.executeSync(() => {
      throw error;
    });
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBe(error);
}

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

describe('handle', () => {
  const serverErrors = (error: unknown) => error instanceof HttpError && error.status >= 500;

  it('errors it accepts count as failures', () => {
    const { breaker, p } = make({ handle: serverErrors });
    throwing(p, new HttpError(503));
    expect(breaker.state).toBe('open');
  });

  it('errors it declines count as successes: they reset a consecutive run', () => {
    const { breaker, p } = make({
      handle: serverErrors,
      window: { kind: 'consecutive', threshold: 2 },
    });
    throwing(p, new HttpError(500));
    throwing(p, new HttpError(404));
    throwing(p, new HttpError(500));
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ successes: 1, failures: 2, ignored: 0 });
  });

  it('errors it declines are reported to onSuccess, still rejecting the caller', async () => {
    const { breaker, p } = make({ handle: serverErrors });
    const successes: unknown[] = [];
    breaker.onSuccess((e) => successes.push(e.detail));
    const notFound = new HttpError(404);
    await expect(p.execute(() => Promise.reject(notFound))).rejects.toBe(notFound);
    expect(successes).toEqual([notFound]);
  });

  it('declined errors count as successes in a rate window too', () => {
    const { breaker, p } = make({
      handle: serverErrors,
      window: { kind: 'count', size: 2 },
    });
    throwing(p, new HttpError(400));
    throwing(p, new HttpError(400));
    expect(breaker.stats()).toMatchObject({ callsInWindow: 2, failuresInWindow: 0 });
  });

  it('receives the error exactly as thrown', () => {
    const seen: unknown[] = [];
    const { p } = make({
      handle: (e) => {
        seen.push(e);
        return false;
      },
    });
    const odd = { not: 'an Error' };
    throwing(p, odd);
    expect(seen).toEqual([odd]);
  });

  it('is not consulted for refusals of other policies', async () => {
    let asked = 0;
    const { breaker } = make({
      handle: () => {
        asked++;
        return true;
      },
    });
    const inner = new CircuitBreaker({ clock: breaker.clock, name: 'inner' });
    inner.trip();
    const r = await pipeline(breaker, inner).tryExecute(() => 'ok');
    expect(r).toMatchObject({ ok: false, rejected: true });
    expect(asked).toBe(0);
  });
});

describe('throwing predicates', () => {
  const reported: unknown[] = [];
  afterEach(() => {
    reported.length = 0;
    setListenerErrorHandler((error) => console.error('breakwater: an event listener threw', error));
  });

  it('a handle that throws counts the call as failed and reports the throw', () => {
    setListenerErrorHandler((e) => reported.push(e));
    const oops = new Error('predicate bug');
    const { breaker, p } = make({
      handle: () => {
        throw oops;
      },
    });
    const original = new Error('dependency');
    throwing(p, original);
    expect(breaker.state).toBe('open');
    expect(reported).toEqual([oops]);
  });

  it('a handleResult that throws counts the call as failed; the caller still gets the value', () => {
    setListenerErrorHandler((e) => reported.push(e));
    const oops = new Error('predicate bug');
    const { breaker, p } = make({
      handleResult: () => {
        throw oops;
      },
    });
    expect(p.executeSync(() => 'value')).toBe('value');
    expect(breaker.state).toBe('open');
    expect(reported).toEqual([oops]);
  });
});

describe('handleResult', () => {
  it('results it accepts count as failures, and the caller still gets them', async () => {
    const { breaker, p } = make({
      handleResult: (r) => (r as { status: number }).status === 503,
    });
    const unavailable = { status: 503 };
    await expect(p.execute(() => unavailable)).resolves.toBe(unavailable);
    expect(breaker.state).toBe('open');
  });

  it('results it declines count as successes', () => {
    const { breaker, p } = make({
      handleResult: (r) => (r as { status: number }).status === 503,
    });
    expect(p.executeSync(() => ({ status: 200 }))).toEqual({ status: 200 });
    expect(breaker.stats()).toMatchObject({ state: 'closed', successes: 1 });
  });

  it('failed results are reported to onFailure with the value as detail', () => {
    const { breaker, p } = make({ handleResult: (r) => r === 'bad' });
    const failures: unknown[] = [];
    breaker.onFailure((e) => failures.push(e.detail));
    p.executeSync(() => 'bad');
    expect(failures).toEqual(['bad']);
  });

  it('is not applied to errors', () => {
    let asked = 0;
    const { breaker, p } = make({
      handleResult: () => {
        asked++;
        return false;
      },
    });
    throwing(p, new Error('x'));
    expect(asked).toBe(0);
    expect(breaker.state).toBe('open');
  });

  it('sees the results of async calls once they resolve', async () => {
    const { breaker, p } = make({ handleResult: (r) => r === 'bad' });
    await p.execute(() => Promise.resolve('bad'));
    expect(breaker.state).toBe('open');
  });
});

describe('errors that are never counted', () => {
  it('an open inner breaker refusing the call is ignored by the outer one', async () => {
    const { clock, breaker } = make();
    const inner = new CircuitBreaker({ clock, name: 'inner' });
    inner.trip();
    const p = pipeline(breaker, inner);
    for (let i = 0; i < 3; i++) {
      await expect(p.execute(() => 'ok')).rejects.toBeInstanceOf(BrokenCircuitError);
    }
    expect(breaker.stats()).toMatchObject({ state: 'closed', ignored: 3, failures: 0 });
  });

  it('an isolated inner breaker refusing the call is ignored by the outer one', async () => {
    const { clock, breaker } = make();
    const inner = new CircuitBreaker({ clock, name: 'inner' });
    inner.isolate();
    await pipeline(breaker, inner).tryExecute(() => 'ok');
    expect(breaker.stats()).toMatchObject({ state: 'closed', ignored: 1 });
  });

  it('a full inner bulkhead refusing the call is ignored', async () => {
    const { clock, breaker } = make();
    const bulkhead = new Bulkhead({ maxConcurrent: 1, clock });
    let release!: () => void;
    const holder = pipeline(bulkhead).execute(() => new Promise<void>((r) => (release = r)));
    const r = await pipeline(breaker, bulkhead).tryExecute(() => 'ok');
    expect((r as { error: unknown }).error).toBeInstanceOf(BulkheadRejectedError);
    expect(breaker.stats()).toMatchObject({ state: 'closed', ignored: 1 });
    release();
    await holder;
  });

  it('a refusal thrown by the function itself (a nested pipeline) is ignored too', async () => {
    const { clock, breaker, p } = make();
    const downstream = new CircuitBreaker({ clock, name: 'downstream' });
    downstream.trip();
    const nested = pipeline(downstream);
    await expect(p.execute(() => nested.execute(() => 'ok'))).rejects.toBeInstanceOf(
      BrokenCircuitError,
    );
    expect(breaker.stats()).toMatchObject({ state: 'closed', ignored: 1 });
  });

  it("the caller's own abort reason is ignored", async () => {
    const { breaker, p } = make();
    const controller = new AbortController();
    const call = p.execute(
      ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      { signal: controller.signal },
    );
    controller.abort();
    await expect(call).rejects.toBe(controller.signal.reason);
    expect(breaker.stats()).toMatchObject({ state: 'closed', ignored: 1, failures: 0 });
  });

  it('an error that merely looks like an abort, without the caller aborting, counts', async () => {
    const { breaker, p } = make();
    const controller = new AbortController();
    const abortLike = new DOMException('aborted', 'AbortError');
    await expect(
      p.execute(() => Promise.reject(abortLike), { signal: controller.signal }),
    ).rejects.toBe(abortLike);
    expect(breaker.state).toBe('open');
  });
});

describe('timeouts', () => {
  it('a TimeoutError from an inner timeout counts as a failure', async () => {
    const { clock, breaker } = make();
    const p = pipeline(breaker, new Timeout({ timeout: 100, clock }));
    const call = p.execute(
      ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    await clock.advanceAsync(100);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isTimeoutError(error)).toBe(true);
    expect(breaker.stats()).toMatchObject({ state: 'open', failures: 1, ignored: 0 });
  });

  it('a TimeoutError goes through handle like any other error', async () => {
    const { clock, breaker } = make({ handle: (e) => !isTimeoutError(e) });
    const p = pipeline(breaker, new Timeout({ timeout: 100, strategy: 'aggressive', clock }));
    const call = p.execute(() => new Promise(() => {}));
    await clock.advanceAsync(100);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
    expect(breaker.stats()).toMatchObject({ state: 'closed', successes: 1 });
  });
});
