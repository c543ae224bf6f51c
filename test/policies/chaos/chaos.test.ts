/**
 * Chaos steps inject faults, latency, outcomes and side actions into a share of calls, drawn
 * from a seeded source; they are off until enabled, cap the injections active at once, and
 * end an injected latency as soon as the call's signal aborts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ChaosCall,
  ChaosFaultError,
  type ChaosInjectionEvent,
  type ChaosOptions,
  CircuitState,
  chaos,
  circuitBreaker,
  isInjectedFault,
  pipeline,
  retry,
  timeout,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';
import { seededRandom } from '../../support/random.js';

const CALLS = 100_000;
const RATE = 0.25;

let clock: ManualClock;
afterEach(() => {
  expect(clock.pendingTimers, 'timers left behind').toBe(0);
});

/** Runs CALLS calls through a step of `options` at RATE; answers the indexes injected into. */
async function injectedCalls(options: ChaosOptions, seed: number): Promise<number[]> {
  clock = new ManualClock();
  const injected: number[] = [];
  let i = 0;
  const step = chaos({
    ...options,
    rate: RATE,
    enabled: true,
    random: seededRandom(seed),
    clock,
  } as ChaosOptions);
  step.onInjection(() => injected.push(i));
  const p = pipeline(step);
  const calls: Promise<unknown>[] = [];
  for (; i < CALLS; i++) calls.push(p.tryExecute(() => 'real'));
  await clock.advanceAsync(10);
  await Promise.all(calls);
  expect(step.stats().injected).toBe(injected.length);
  return injected;
}

describe('a chaos step injects at its rate', () => {
  it.each<[string, ChaosOptions]>([
    ['fault', { strategy: 'fault' }],
    ['latency', { strategy: 'latency', latency: 10 }],
    ['outcome', { strategy: 'outcome', outcome: 'injected' }],
    ['behavior', { strategy: 'behavior', behavior: () => {} }],
  ])(
    '%s: over 100,000 seeded calls within 1 % of the rate, the same calls every run',
    async (_, options) => {
      const first = await injectedCalls(options, 42);
      expect(Math.abs(first.length / CALLS - RATE) / RATE).toBeLessThan(0.01);
      expect(await injectedCalls(options, 42)).toEqual(first);
      expect(await injectedCalls(options, 7)).not.toEqual(first);
    },
  );
});

describe('a chaos step that is off', () => {
  it('injects nothing and draws nothing: enabled false (the default) or rate 0', async () => {
    clock = new ManualClock();
    let draws = 0;
    const random = () => {
      draws++;
      return 0;
    };
    for (const step of [
      chaos({ strategy: 'fault', rate: 1, random, clock }),
      chaos({ strategy: 'fault', rate: 1, enabled: false, random, clock }),
      chaos({ strategy: 'latency', rate: 0, enabled: true, random, clock }),
    ]) {
      const p = pipeline(step);
      for (let i = 0; i < 1_000; i++) await expect(p.execute(() => i)).resolves.toBe(i);
      expect(step.stats()).toMatchObject({ injected: 0, calls: 0, enabled: false });
      expect(step.state).toBe('off');
    }
    expect(draws).toBe(0);
  });

  it('asks an enabled function only for the calls drawn, and injects into those it allows', async () => {
    clock = new ManualClock();
    const marked = new AsyncLocalStorage<{ chaos: boolean }>();
    const asked: ChaosCall[] = [];
    const step = chaos({
      name: 'scoped',
      rate: 0.5,
      random: seededRandom(1),
      enabled: (call) => {
        asked.push(call);
        return marked.getStore()?.chaos === true;
      },
      clock,
    });
    const p = pipeline(step);
    const plain = await Promise.all(Array.from({ length: 200 }, () => p.tryExecute(() => 'real')));
    expect(plain.every((r) => r.ok)).toBe(true);
    const drawnPlain = asked.length;
    expect(drawnPlain).toBeGreaterThan(50);
    expect(drawnPlain).toBeLessThan(150);
    const inRequest = await marked.run({ chaos: true }, () =>
      Promise.all(Array.from({ length: 200 }, () => p.tryExecute(() => 'real'))),
    );
    const failed = inRequest.filter((r) => !r.ok).length;
    expect(failed).toBe(asked.length - drawnPlain);
    expect(step.stats().injected).toBe(failed);
    expect(asked[0]).toEqual({ name: 'scoped', strategy: 'fault', criticality: 'critical' });
  });

  it('switches on and off by reconfigure, in the pipelines that hold it', async () => {
    clock = new ManualClock();
    const step = chaos({ strategy: 'fault', rate: 1, clock });
    const p = pipeline(step);
    await expect(p.execute(() => 'real')).resolves.toBe('real');
    step.reconfigure({ rate: 1, enabled: true });
    expect(step.state).toBe('injecting');
    await expect(p.execute(() => 'real')).rejects.toBeInstanceOf(ChaosFaultError);
    step.reconfigure({ rate: 1 });
    await expect(p.execute(() => 'real')).resolves.toBe('real');
  });
});

describe('a pipeline holding a chaos step', () => {
  it('leaves it out while it is off, and takes it in again when it is switched on', async () => {
    clock = new ManualClock();
    const step = chaos({ strategy: 'latency', latency: 100, rate: 1, clock });
    const p = pipeline(circuitBreaker({ clock }), step);
    // Off, the latency step is not planned: the pipeline never waits, so executeSync is allowed.
    expect(p.executeSync(() => 'sync')).toBe('sync');
    step.reconfigure({ latency: 100, rate: 1, enabled: true });
    expect(() => p.executeSync(() => 'sync')).toThrow(UsageError);
    const call = track(p.execute(() => 'delayed'));
    await clock.advanceAsync(100);
    await call.done;
    expect([call.value, step.stats().injected]).toEqual(['delayed', 1]);
    step.reconfigure({ latency: 100, rate: 0, enabled: true });
    expect(p.executeSync(() => 'sync')).toBe('sync');
  });

  it('releases the gates of an executeSync call on the plan it started with', async () => {
    clock = new ManualClock();
    const step = chaos({ rate: 0.5, enabled: true, random: () => 0.9, clock });
    const breaker = circuitBreaker({ clock });
    const p = pipeline(step, breaker);
    // Switched off during a call: the pipeline plans again once the call is over.
    expect(
      p.executeSync(() => {
        step.reconfigure({ rate: 0.5 });
        return 'during';
      }),
    ).toBe('during');
    step.reconfigure({ rate: 0.5, enabled: true, random: () => 0.9 });
    await Promise.resolve();
    // Switched off while the promise of a call is pending: it settles on its own plan.
    const late = deferred<string>();
    const pending = p.executeSync(() => late.promise);
    step.reconfigure({ rate: 0.5 });
    late.resolve('late');
    await expect(pending).resolves.toBe('late');
    expect(breaker.stats().successes).toBe(2);
  });

  it('runs a call by itself as an empty pipeline while off', async () => {
    clock = new ManualClock();
    const step = chaos({ rate: 1, clock });
    await expect(step.execute(() => 'real')).resolves.toBe('real');
    expect(step.executeSync(() => 'sync')).toBe('sync');
    step.reconfigure({ rate: 1, enabled: true });
    await expect(step.execute(() => 'real')).rejects.toBeInstanceOf(ChaosFaultError);
  });
});

describe('fault', () => {
  it('fails a picked call without calling with a ChaosFaultError that breakers outside count', async () => {
    clock = new ManualClock();
    const breaker = circuitBreaker({ window: { kind: 'consecutive', threshold: 3 }, clock });
    const p = pipeline(breaker, chaos({ name: 'db-chaos', rate: 1, enabled: true, clock }));
    let called = 0;
    for (let i = 0; i < 3; i++) {
      const r = await p.tryExecute(() => called++);
      expect(r.ok).toBe(false);
      const error = (r as { error: unknown }).error as ChaosFaultError;
      expect(error).toBeInstanceOf(ChaosFaultError);
      expect([error.code, error.policy, error.policyName]).toEqual([
        'ERR_BREAKWATER_CHAOS_FAULT',
        'chaos',
        'db-chaos',
      ]);
      expect(isInjectedFault(error)).toBe(true);
    }
    expect(called).toBe(0);
    expect(breaker.state).toBe(CircuitState.Open);
  });

  it('throws the error given, or one made per call, marked as injected; real errors are not', async () => {
    clock = new ManualClock();
    const reset = new Error('ECONNRESET');
    await expect(
      pipeline(chaos({ rate: 1, enabled: true, error: reset, clock })).execute(() => 1),
    ).rejects.toBe(reset);
    expect(isInjectedFault(reset)).toBe(true);
    const made: Error[] = [];
    const p = pipeline(
      chaos({
        rate: 1,
        enabled: true,
        error: (call) => {
          const e = new Error(`fault in ${call.name}`);
          made.push(e);
          return e;
        },
        clock,
      }),
    );
    const errors = await Promise.all([1, 2].map(() => p.execute(() => 1).catch((e: unknown) => e)));
    expect(errors).toEqual(made);
    expect(errors[0]).not.toBe(errors[1]);
    expect(errors.every(isInjectedFault)).toBe(true);
    const real = new Error('real');
    await expect(pipeline(chaos({ clock })).execute(() => Promise.reject(real))).rejects.toBe(real);
    expect(isInjectedFault(real)).toBe(false);
  });

  it('is retried by a retry outside, which then reaches the real call', async () => {
    clock = new ManualClock();
    const draws = [0, 0.9];
    const p = pipeline(
      retry({ maxAttempts: 3, delay: 0, jitter: 'none', clock }),
      chaos({ rate: 0.5, enabled: true, random: () => draws.shift()!, clock }),
    );
    const result = track(p.execute(({ attempt }) => attempt));
    await clock.runAll();
    await result.done;
    expect(result.value).toBe(2);
  });
});

describe('outcome', () => {
  it('answers an HTTP-shaped 503 with Retry-After without calling; a breaker outside counts it', async () => {
    clock = new ManualClock();
    const breaker = circuitBreaker<Response>({
      window: { kind: 'consecutive', threshold: 2 },
      handleResult: (r) => r.status >= 500,
      clock,
    });
    const p = pipeline(
      breaker,
      chaos<Response>({
        strategy: 'outcome',
        rate: 1,
        enabled: true,
        outcome: () => new Response('busy', { status: 503, headers: { 'Retry-After': '2' } }),
        clock,
      }),
    );
    let called = 0;
    const first = await p.execute(() => {
      called++;
      return new Response('real');
    });
    expect([first.status, first.headers.get('retry-after'), await first.text()]).toEqual([
      503,
      '2',
      'busy',
    ]);
    const second = await p.execute(() => new Response('real'));
    expect(second).not.toBe(first);
    expect(called).toBe(0);
    expect(breaker.state).toBe(CircuitState.Open);
  });

  it('fails the call with the error of an outcome function that throws', async () => {
    clock = new ManualClock();
    const oops = new Error('oops');
    const p = pipeline(
      chaos<string>({
        strategy: 'outcome',
        rate: 1,
        enabled: true,
        outcome: () => {
          throw oops;
        },
        clock,
      }),
    );
    await expect(p.execute(() => 'real')).rejects.toBe(oops);
  });
});

describe('latency', () => {
  it('delays a picked call on the clock, then makes it', async () => {
    clock = new ManualClock();
    const p = pipeline(
      chaos({ strategy: 'latency', latency: '250ms', rate: 1, enabled: true, clock }),
    );
    let calledAt = -1;
    const call = track(
      p.execute(() => {
        calledAt = clock.now();
        return 'real';
      }),
      clock,
    );
    await clock.advanceAsync(249);
    expect(call.settled).toBe(false);
    await clock.advanceAsync(1);
    await call.done;
    expect([call.value, calledAt]).toEqual(['real', 250]);
  });

  it('ends at once when the call’s signal aborts, leaving no timer', async () => {
    clock = new ManualClock();
    const step = chaos({ strategy: 'latency', latency: 10_000, rate: 1, enabled: true, clock });
    const p = pipeline(step);
    const controller = new AbortController();
    let called = false;
    const call = track(
      p.execute(
        () => {
          called = true;
        },
        { signal: controller.signal },
      ),
    );
    await clock.advanceAsync(1);
    expect(clock.pendingTimers).toBe(1);
    controller.abort(new Error('caller left'));
    await call.done;
    expect([call.ok, (call.error as Error).message, called]).toEqual([false, 'caller left', false]);
    expect([step.stats().active, clock.pendingTimers]).toEqual([0, 0]);
  });

  it('ends one call whose signal aborts and keeps the others’ delay', async () => {
    clock = new ManualClock();
    const step = chaos({ strategy: 'latency', latency: 10_000, rate: 1, enabled: true, clock });
    const p = pipeline(step);
    const controller = new AbortController();
    const call = track(p.execute(() => 'left', { signal: controller.signal }));
    const other = track(p.execute(() => 'other'));
    await clock.advanceAsync(1);
    expect(step.stats().active).toBe(2);
    controller.abort(new Error('caller left'));
    await call.done;
    expect([call.ok, other.settled, step.stats().active]).toEqual([false, false, 1]);
    await clock.advanceAsync(9_999);
    await other.done;
    expect(other.value).toBe('other');
    expect(step.stats().active).toBe(0);
  });

  it('is cut by a timeout outside, whose deadline passes during the delay', async () => {
    clock = new ManualClock();
    const p = pipeline(
      timeout({ timeout: 100, clock }),
      chaos({ strategy: 'latency', latency: 1_000, rate: 1, enabled: true, clock }),
    );
    const call = track(
      p.execute(() => 'real'),
      clock,
    );
    await clock.advanceAsync(100);
    await call.done;
    expect([call.ok, (call.error as Error).name, call.at]).toEqual([false, 'TimeoutError', 100]);
  });

  it('holds at most maxActive calls under 1,000 concurrent ones; the others go on untouched', async () => {
    clock = new ManualClock();
    const step = chaos({
      strategy: 'latency',
      latency: 50,
      rate: 1,
      enabled: true,
      maxActive: 10,
      clock,
    });
    let mostActive = 0;
    step.onInjection((e: ChaosInjectionEvent) => {
      mostActive = Math.max(mostActive, e.active);
    });
    const p = pipeline(step);
    const release = deferred<void>();
    let running = 0;
    let mostRunning = 0;
    const calls = Array.from({ length: 1_000 }, (_, i) =>
      p.execute(async () => {
        running++;
        mostRunning = Math.max(mostRunning, running);
        await release.promise;
        running--;
        return i;
      }),
    );
    await clock.advanceAsync(0);
    expect(step.stats()).toMatchObject({ injected: 10, capped: 990, active: 10 });
    expect(running).toBe(990);
    await clock.advanceAsync(50);
    expect(step.stats().active).toBe(0);
    expect(running).toBe(1_000);
    release.resolve();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(mostActive).toBe(10);
  });

  it('lets the calls it holds go on when disposed', async () => {
    clock = new ManualClock();
    const step = chaos({ strategy: 'latency', latency: 10_000, rate: 1, enabled: true, clock });
    const call = track(pipeline(step).execute(() => 'real'));
    await clock.advanceAsync(1);
    step.dispose();
    await call.done;
    expect(call.value).toBe('real');
  });
});

describe('behavior', () => {
  it('runs the action before the call, and waits for its promise', async () => {
    clock = new ManualClock();
    const order: string[] = [];
    const action = deferred<void>();
    const p = pipeline(
      chaos({
        strategy: 'behavior',
        rate: 1,
        enabled: true,
        behavior: () => {
          order.push('behavior');
          return action.promise;
        },
        clock,
      }),
    );
    const call = track(
      p.execute(() => {
        order.push('call');
        return 'real';
      }),
    );
    await clock.advanceAsync(0);
    expect(order).toEqual(['behavior']);
    action.resolve();
    await call.done;
    expect([order, call.value]).toEqual([['behavior', 'call'], 'real']);
  });

  it('fails the call with the action’s error, thrown or rejected', async () => {
    clock = new ManualClock();
    const boom = new Error('boom');
    for (const behavior of [
      () => {
        throw boom;
      },
      () => Promise.reject(boom),
    ]) {
      const p = pipeline(chaos({ strategy: 'behavior', rate: 1, enabled: true, behavior, clock }));
      await expect(p.execute(() => 'real')).rejects.toBe(boom);
    }
  });

  it('lets a call whose signal aborts leave; the action stays active until it settles', async () => {
    clock = new ManualClock();
    const action = deferred<void>();
    const step = chaos({
      strategy: 'behavior',
      rate: 1,
      enabled: true,
      maxActive: 1,
      behavior: () => action.promise,
      clock,
    });
    const p = pipeline(step);
    const controller = new AbortController();
    const call = track(p.execute(() => 'real', { signal: controller.signal }));
    await clock.advanceAsync(0);
    controller.abort(new Error('left'));
    await call.done;
    expect(call.ok).toBe(false);
    expect(step.stats().active).toBe(1);
    await expect(p.execute(() => 'capped')).resolves.toBe('capped');
    expect(step.stats().capped).toBe(1);
    action.resolve();
    await action.promise;
    await clock.advanceAsync(0);
    expect(step.stats().active).toBe(0);
  });
});
