/**
 * Request coalescing: calls in flight with one key share one run of the steps inside the
 * coalescer; callers leave on their own; nothing is kept once a run settles. All on a
 * ManualClock and promises the test settles by hand.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  bulkhead,
  CircuitBreaker,
  CircuitState,
  Coalescer,
  coalesce,
  type ExecutionContext,
  hedge,
  loadShedder,
  OptionsError,
  pipeline,
  Registry,
  retry,
  TimeoutError,
  timeout,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

/** A function whose runs the test answers by hand, recording the signal of each. */
function byHand<T = string>() {
  const runs: { answer: ReturnType<typeof deferred<T>>; signal: AbortSignal }[] = [];
  return {
    runs,
    fn: ({ signal }: ExecutionContext): Promise<T> => {
      const answer = deferred<T>();
      runs.push({ answer, signal });
      return answer.promise;
    },
  };
}

const breaker = (clock: ManualClock, threshold = 1_000) =>
  new CircuitBreaker({ window: { kind: 'consecutive', threshold }, clock });

/** A full garbage collection, as `--expose-gc` gives it, without that flag on the test run. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Lets pending promise reactions run. */
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('coalesce: calls with one key share one run', () => {
  it('makes exactly one call for 1,000 concurrent callers of one key, and every caller gets its value', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const work = byHand<{ id: number }>();
    const calls = Array.from({ length: 1_000 }, () => track(p.execute(work.fn, { key: 'k' })));
    expect(work.runs).toHaveLength(1);
    expect(c.stats()).toMatchObject({ calls: 1_000, flights: 1, coalesced: 999, inFlight: 1 });
    const value = { id: 1 };
    work.runs[0]!.answer.resolve(value);
    await Promise.all(calls.map((t) => t.done));
    expect(calls.every((t) => t.ok === true && t.value === value)).toBe(true);
    expect(c.stats().inFlight).toBe(0);
  });

  it('runs calls with different keys, and calls without a key, each on its own', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const work = byHand();
    const a = track(p.execute(work.fn, { key: 'a' }));
    const b = track(p.execute(work.fn, { key: 'b' }));
    const none1 = track(p.execute(work.fn));
    const none2 = track(p.execute(work.fn, {}));
    expect(work.runs).toHaveLength(4);
    expect(c.stats()).toMatchObject({ calls: 4, flights: 4, coalesced: 0, inFlight: 2 });
    work.runs.forEach((r, i) => {
      r.answer.resolve(`v${i}`);
    });
    await Promise.all([a, b, none1, none2].map((t) => t.done));
    expect([a, b, none1, none2].map((t) => t.value)).toEqual(['v0', 'v1', 'v2', 'v3']);
  });

  it('starts afresh once a run settled: nothing is kept, a failure neither', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const work = byHand();
    const first = [
      track(p.execute(work.fn, { key: 'k' })),
      track(p.execute(work.fn, { key: 'k' })),
    ];
    const failure = new Error('down');
    work.runs[0]!.answer.reject(failure);
    await Promise.all(first.map((t) => t.done));
    expect(first.map((t) => t.error)).toEqual([failure, failure]);
    expect(c.stats().inFlight).toBe(0);
    const later = track(p.execute(work.fn, { key: 'k' }));
    expect(work.runs).toHaveLength(2);
    work.runs[1]!.answer.resolve('up');
    await later.done;
    expect(later.value).toBe('up');
  });

  it('runs the function of the caller that started the run, never the others', async () => {
    const p = pipeline(coalesce());
    const first = byHand();
    const second = byHand();
    const a = track(p.execute(first.fn, { key: 'k' }));
    const b = track(p.execute(second.fn, { key: 'k' }));
    expect([first.runs.length, second.runs.length]).toEqual([1, 0]);
    first.runs[0]!.answer.resolve('first');
    await Promise.all([a.done, b.done]);
    expect([a.value, b.value]).toEqual(['first', 'first']);
  });

  it('shares a synchronous function’s value, and a function that throws fails every caller', async () => {
    const p = pipeline(coalesce());
    expect(await p.execute(() => 7, { key: 'k' })).toBe(7);
    const boom = new Error('boom');
    await expect(
      p.execute(
        () => {
          throw boom;
        },
        { key: 'k' },
      ),
    ).rejects.toBe(boom);
    expect(await p.tryExecute(() => 8, { key: 'k' })).toEqual({ ok: true, value: 8 });
  });

  it('gives each caller what `share` makes of the value, once per caller', async () => {
    let copies = 0;
    const p = pipeline(
      coalesce<Response>({
        share: (r) => {
          copies++;
          return r.clone();
        },
      }),
    );
    const work = byHand<Response>();
    const calls = [1, 2, 3].map(() => p.execute(work.fn, { key: 'GET /a' }));
    work.runs[0]!.answer.resolve(new Response('body'));
    const bodies = await Promise.all(calls.map(async (r) => (await r).text()));
    expect(bodies).toEqual(['body', 'body', 'body']);
    expect(copies).toBe(3);
  });

  it('fails only the caller for whom `share` throws', async () => {
    let n = 0;
    const oops = new Error('copy failed');
    const p = pipeline(
      coalesce({
        share: (v) => {
          if (++n === 2) throw oops;
          return v;
        },
      }),
    );
    const work = byHand();
    const calls = [1, 2, 3].map(() => track(p.execute(work.fn, { key: 'k' })));
    work.runs[0]!.answer.resolve('v');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.map((t) => (t.ok ? t.value : t.error))).toEqual(['v', oops, 'v']);
  });

  it('does not coalesce when disabled, and reconfigure turns it back on', async () => {
    const c = coalesce({ enabled: false });
    const p = pipeline(c);
    const work = byHand();
    p.execute(work.fn, { key: 'k' });
    p.execute(work.fn, { key: 'k' });
    expect(work.runs).toHaveLength(2);
    c.reconfigure({ enabled: true });
    p.execute(work.fn, { key: 'k' });
    p.execute(work.fn, { key: 'k' });
    expect(work.runs).toHaveLength(3);
    for (const r of work.runs) r.answer.resolve('v');
    await flush();
  });
});

describe('coalesce: callers leave on their own', () => {
  it('goes on for the last caller when 999 of 1,000 abort, each rejecting at once with its own reason', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const work = byHand();
    const controllers = Array.from({ length: 1_000 }, () => new AbortController());
    const calls = controllers.map((ac) =>
      track(p.execute(work.fn, { key: 'k', signal: ac.signal })),
    );
    const reasons = controllers.slice(0, 999).map((ac, i) => {
      const reason = new Error(`left ${i}`);
      ac.abort(reason);
      return reason;
    });
    await Promise.all(calls.slice(0, 999).map((t) => t.done));
    expect(calls.slice(0, 999).map((t) => t.error)).toEqual(reasons);
    expect(work.runs[0]!.signal.aborted).toBe(false);
    expect(calls[999]!.settled).toBe(false);
    expect(c.stats()).toMatchObject({ abandoned: 0, inFlight: 1 });
    work.runs[0]!.answer.resolve('for the last');
    await calls[999]!.done;
    expect(calls[999]!.value).toBe('for the last');
    expect(work.runs).toHaveLength(1);
  });

  it('aborts the shared work’s signal and drops its key at once when every caller left', async () => {
    const c = coalesce();
    const abandoned: unknown[] = [];
    c.onAbandoned((e) => abandoned.push(e));
    const p = pipeline(c);
    const work = byHand();
    const controllers = [new AbortController(), new AbortController()];
    const calls = controllers.map((ac) =>
      track(p.execute(work.fn, { key: 'k', signal: ac.signal })),
    );
    controllers[0]!.abort(new Error('first left'));
    expect(work.runs[0]!.signal.aborted).toBe(false);
    const last = new Error('last left');
    controllers[1]!.abort(last);
    expect(work.runs[0]!.signal.aborted).toBe(true);
    expect(work.runs[0]!.signal.reason).toBe(last);
    expect(c.stats()).toMatchObject({ abandoned: 1, inFlight: 0 });
    expect(abandoned).toEqual([{ key: 'k', reason: last }]);
    // The next caller starts a new run rather than join the doomed one.
    const next = track(p.execute(work.fn, { key: 'k' }));
    expect(work.runs).toHaveLength(2);
    expect(work.runs[1]!.signal.aborted).toBe(false);
    // The doomed run ends late: it reaches no one.
    work.runs[0]!.answer.resolve('too late');
    work.runs[1]!.answer.resolve('fresh');
    await Promise.all([...calls, next].map((t) => t.done));
    expect(calls.map((t) => t.error)).toEqual([new Error('first left'), last]);
    expect(next.value).toBe('fresh');
    expect(c.stats().inFlight).toBe(0);
  });

  it('lets a caller leave at its own deadline (`execute` timeout) while the others wait on', async () => {
    const clock = new ManualClock();
    // The breaker outside puts the pipeline on the manual clock.
    const p = pipeline(breaker(clock), coalesce());
    const work = byHand();
    const short = track(p.execute(work.fn, { key: 'k', timeout: 100 }));
    const long = track(p.execute(work.fn, { key: 'k' }));
    clock.advance(100);
    await short.done;
    expect(short.error).toBeInstanceOf(TimeoutError);
    expect(work.runs[0]!.signal.aborted).toBe(false);
    expect(long.settled).toBe(false);
    work.runs[0]!.answer.resolve('v');
    await long.done;
    expect(long.value).toBe('v');
  });

  it('lets a caller leave when a timeout outside the coalescer passes, without aborting the shared work', async () => {
    const clock = new ManualClock();
    const c = coalesce();
    const quick = pipeline(timeout({ timeout: 100, clock }), c);
    const patient = pipeline(c);
    const work = byHand();
    const a = track(quick.execute(work.fn, { key: 'k' }));
    const b = track(patient.execute(work.fn, { key: 'k' }));
    clock.advance(100);
    await a.done;
    expect(a.error).toBeInstanceOf(TimeoutError);
    expect(work.runs[0]!.signal.aborted).toBe(false);
    work.runs[0]!.answer.resolve('v');
    await b.done;
    expect(b.value).toBe('v');
  });

  it('fails a caller whose signal had aborted before the call without starting anything', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const work = byHand();
    const ac = new AbortController();
    ac.abort(new Error('already'));
    await expect(p.execute(work.fn, { key: 'k', signal: ac.signal })).rejects.toThrow('already');
    expect(work.runs).toHaveLength(0);
    expect(c.stats().inFlight).toBe(0);
  });

  it('handles a starter whose function aborts the caller’s own signal', async () => {
    const c = coalesce();
    const p = pipeline(c);
    const ac = new AbortController();
    const reason = new Error('self');
    let inner: AbortSignal | undefined;
    const call = track(
      p.execute(
        ({ signal }) => {
          inner = signal;
          ac.abort(reason);
          return new Promise(() => {});
        },
        { key: 'k', signal: ac.signal },
      ),
    );
    await call.done;
    expect(call.error).toBe(reason);
    expect(inner?.aborted).toBe(true);
    expect(c.stats()).toMatchObject({ abandoned: 1, inFlight: 0 });
  });
});

describe('coalesce: policies outside see each caller, policies inside see one run', () => {
  it('an outer breaker counts each caller’s failure; an inner one counts the run once', async () => {
    const clock = new ManualClock();
    const outer = breaker(clock);
    const inner = breaker(clock);
    const p = pipeline(outer, coalesce(), inner);
    const work = byHand();
    const calls = [1, 2, 3, 4, 5].map(() => track(p.execute(work.fn, { key: 'k' })));
    work.runs[0]!.answer.reject(new Error('down'));
    await Promise.all(calls.map((t) => t.done));
    expect(outer.stats().failures).toBe(5);
    expect(inner.stats().failures).toBe(1);
  });

  it('an outer breaker ignores a caller that left (its own abort), and counts the others’ success', async () => {
    const clock = new ManualClock();
    const outer = breaker(clock);
    const p = pipeline(outer, coalesce());
    const work = byHand();
    const ac = new AbortController();
    const leaving = track(p.execute(work.fn, { key: 'k', signal: ac.signal }));
    const staying = track(p.execute(work.fn, { key: 'k' }));
    ac.abort(new Error('bye'));
    work.runs[0]!.answer.resolve('v');
    await Promise.all([leaving.done, staying.done]);
    expect(outer.stats()).toMatchObject({ successes: 1, failures: 0, ignored: 1 });
  });

  it('a bulkhead inside holds one permit for the whole flight', async () => {
    const pool = bulkhead({ maxConcurrent: 1 });
    const p = pipeline(coalesce(), pool);
    const work = byHand();
    const calls = Array.from({ length: 50 }, () => track(p.execute(work.fn, { key: 'k' })));
    expect(pool.stats().inFlight).toBe(1);
    work.runs[0]!.answer.resolve('v');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.every((t) => t.value === 'v')).toBe(true);
    expect(pool.stats().inFlight).toBe(0);
  });

  it('shares an inner refusal with the callers waiting, and an outer breaker does not count it', async () => {
    const clock = new ManualClock();
    const outer = breaker(clock);
    const inner = breaker(clock, 1);
    inner.isolate();
    const p = pipeline(outer, coalesce(), inner);
    const calls = [1, 2].map(() => track(p.execute(() => 'never', { key: 'k' })));
    await Promise.all(calls.map((t) => t.done));
    expect(calls.every((t) => t.ok === false)).toBe(true);
    expect(outer.stats()).toMatchObject({ failures: 0, state: CircuitState.Closed });
  });

  it('a retry inside retries the shared work once per flight', async () => {
    const clock = new ManualClock();
    const p = pipeline(coalesce(), retry({ maxAttempts: 3, delay: 10, jitter: 'none', clock }));
    const work = byHand();
    const calls = Array.from({ length: 10 }, () => track(p.execute(work.fn, { key: 'k' })));
    expect(work.runs).toHaveLength(1);
    work.runs[0]!.answer.reject(new Error('try again'));
    await flush();
    clock.advance(10);
    await flush();
    expect(work.runs).toHaveLength(2);
    work.runs[1]!.answer.resolve('second');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.every((t) => t.value === 'second')).toBe(true);
  });

  it('a retry outside retries each caller, who joins the flight in progress or starts one', async () => {
    const clock = new ManualClock();
    const c = coalesce();
    const p = pipeline(retry({ maxAttempts: 2, delay: 10, jitter: 'none', clock }), c);
    const work = byHand();
    const calls = [1, 2].map(() => track(p.execute(work.fn, { key: 'k' })));
    work.runs[0]!.answer.reject(new Error('once'));
    await flush();
    clock.advance(10);
    await flush();
    expect(work.runs).toHaveLength(2);
    work.runs[1]!.answer.resolve('v');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.map((t) => t.value)).toEqual(['v', 'v']);
    expect(c.stats()).toMatchObject({ flights: 2, coalesced: 2 });
  });
});

describe('coalesce: with other ways of running', () => {
  it('shares one run among the attempts of hedges, by the call’s key, and aborts it when they all lose', async () => {
    const c = coalesce();
    const h = hedge({ delay: 0, maxHedges: 1 });
    const p = pipeline(h, c);
    const work = byHand();
    const call = track(p.execute(work.fn, { key: 'k' }));
    // Two attempts at once, both through the coalescer: one run.
    expect(work.runs).toHaveLength(1);
    expect(c.stats()).toMatchObject({ calls: 2, flights: 1, coalesced: 1 });
    work.runs[0]!.answer.resolve('v');
    await call.done;
    expect(call.value).toBe('v');
    expect(c.stats().inFlight).toBe(0);
  });

  it('runs the steps inside it through a hedge inside it, once per flight', async () => {
    const h = hedge({ delay: 0, maxHedges: 1 });
    const p = pipeline(coalesce(), h);
    const work = byHand();
    const calls = [1, 2].map(() => track(p.execute(work.fn, { key: 'k' })));
    expect(work.runs).toHaveLength(2);
    work.runs[1]!.answer.resolve('hedge won');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.map((t) => t.value)).toEqual(['hedge won', 'hedge won']);
    expect(work.runs[0]!.signal.aborted).toBe(true);
  });

  it('shares by the key of a keyed pipeline’s call', async () => {
    const registry = new Registry({ coalescers: { users: { enabled: true } } });
    const c = registry.coalesce('users');
    const p = pipeline(c, registry.keyed('circuitBreaker', 'api'));
    const work = byHand();
    const calls = [1, 2].map(() => track(p.execute(work.fn, { key: 'host-a' })));
    expect(work.runs).toHaveLength(1);
    work.runs[0]!.answer.resolve('v');
    await Promise.all(calls.map((t) => t.done));
    expect(calls.map((t) => t.value)).toEqual(['v', 'v']);
    expect(registry.snapshot().instances.find((i) => i.kind === 'coalesce')).toMatchObject({
      name: 'users',
      stats: { calls: 2, flights: 1, coalesced: 1, inFlight: 0 },
    });
    registry.dispose();
  });

  it('reads `enabled` from config data, and refuses a bad one naming the path', () => {
    const registry = new Registry({ coalescers: { off: { enabled: false } } });
    expect(registry.coalesce('off').o.enabled).toBe(false);
    expect(() => new Registry({ coalescers: { bad: { enabled: 'no' } } } as never)).toThrow(
      /coalescers\.bad\.enabled/,
    );
  });
});

describe('coalesce: what the shared run is given', () => {
  it('resolves tryExecute callers with the shared outcome, a failure as a failure', async () => {
    const p = pipeline(coalesce());
    const work = byHand();
    const calls = [1, 2].map(() => p.tryExecute(work.fn, { key: 'k' }));
    const down = new Error('down');
    work.runs[0]!.answer.reject(down);
    expect(await Promise.all(calls)).toEqual([
      { ok: false, error: down, rejected: false },
      { ok: false, error: down, rejected: false },
    ]);
  });

  it('bounds the run by a timeout inside, whatever the callers’ deadlines', async () => {
    const clock = new ManualClock();
    const p = pipeline(coalesce({ clock }), timeout({ timeout: 50, clock }));
    const work = byHand();
    const calls = [1, 2].map(() => track(p.execute(work.fn, { key: 'k', timeout: 1_000 })));
    clock.advance(50);
    expect(work.runs[0]!.signal.aborted).toBe(true);
    work.runs[0]!.answer.reject(work.runs[0]!.signal.reason);
    await Promise.all(calls.map((t) => t.done));
    expect(calls.every((t) => t.error instanceof TimeoutError)).toBe(true);
  });

  it('gives the run the criticality of the call that started it', async () => {
    const seen: number[] = [];
    const clock = new ManualClock();
    const shedder = loadShedder({ clock });
    const admit = shedder.admit.bind(shedder);
    // A spy on the real shedder's admission: the level it is asked with.
    shedder.admit = (now: number, level?: number) => {
      seen.push(level ?? -1);
      return admit(now, level);
    };
    const p = pipeline(coalesce(), shedder);
    const work = byHand();
    const calls = [
      p.execute(work.fn, { key: 'k', criticality: 'sheddable' }),
      p.execute(work.fn, { key: 'k', criticality: 'critical-plus' }),
    ];
    work.runs[0]!.answer.resolve('v');
    await Promise.all(calls);
    expect(seen).toEqual([0]);
  });
});

describe('coalesce: nothing is left behind', () => {
  it('leaves nothing behind for a million distinct keys once they settled: no key, no heap', async () => {
    const gc = collector();
    const c = coalesce();
    const p = pipeline(c);
    const batch = 10_000;
    let heapAfterFirst = 0;
    for (let b = 0; b < 100; b++) {
      const calls: Promise<unknown>[] = [];
      const answers: ReturnType<typeof deferred>[] = [];
      for (let i = 0; i < batch; i++) {
        const d = deferred();
        answers.push(d);
        calls.push(p.execute(() => d.promise, { key: `k${b}:${i}` }));
      }
      expect(c.stats().inFlight).toBe(batch);
      for (const d of answers) d.resolve(1);
      await Promise.all(calls);
      expect(c.stats().inFlight).toBe(0);
      if (b === 0) {
        gc();
        heapAfterFirst = process.memoryUsage().heapUsed;
      }
    }
    expect(c.stats()).toMatchObject({ calls: 1_000_000, flights: 1_000_000, inFlight: 0 });
    gc();
    console.log(
      `heap after a million keys: ${process.memoryUsage().heapUsed - heapAfterFirst} B more than after the first 10,000`,
    );
    // A flight kept per key would hold well over 100 bytes each: 100 MB for these keys.
    expect(process.memoryUsage().heapUsed - heapAfterFirst).toBeLessThan(16 * 1024 * 1024);
  }, 300_000);

  it('checks its options: unknown keys and wrong types are named', () => {
    expect(() => coalesce({ share: 1 } as never)).toThrow(OptionsError);
    expect(() => coalesce({ enabld: true } as never)).toThrow(/enabld.*did you mean `enabled`/);
    expect(() => coalesce({ enabled: 'yes' } as never)).toThrow(OptionsError);
    expect(() => new Coalescer({ name: 'a' }).reconfigure({ name: 'b' })).toThrow(OptionsError);
  });

  it('rejects a call whose key is not a string, before anything runs', async () => {
    const work = byHand();
    await expect(
      pipeline(coalesce()).execute(work.fn, { key: 42 as never }),
    ).rejects.toBeInstanceOf(OptionsError);
    expect(work.runs).toHaveLength(0);
  });
});
