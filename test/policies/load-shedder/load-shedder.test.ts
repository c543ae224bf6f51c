import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type Criticality,
  eventLoopLoad,
  isLoadShedError,
  LoadShedError,
  type LoadShedEvent,
  loadShedder,
  loadShedderDefaults,
  OptionsError,
  pipeline,
  Registry,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

const fail = () => Promise.reject(new Error('overloaded'));
const ok = () => 'ok';

describe('LoadShedder options', () => {
  it('has the documented defaults', () => {
    expect(loadShedderDefaults).toEqual({
      k: 2,
      window: 60_000,
      maxRefusalRate: 0.9,
      minRequests: 100,
      name: 'loadShedder',
    });
  });

  it.each([
    [{ k: 0.5 }, 'k'],
    [{ k: Number.NaN }, 'k'],
    [{ window: 500 }, 'window'],
    [{ window: '2h' }, 'window'],
    [{ maxRefusalRate: 1 }, 'maxRefusalRate'],
    [{ maxRefusalRate: -0.1 }, 'maxRefusalRate'],
    [{ minRequests: 1.5 }, 'minRequests'],
    [{ handle: 'yes' }, 'handle'],
    [{ kk: 2 }, 'kk'],
  ])('refuses %o with an OptionsError naming %s', (options, field) => {
    expect(() => loadShedder(options as never)).toThrow(OptionsError);
    expect(() => loadShedder(options as never)).toThrow(field);
  });

  it('takes durations as strings', () => {
    const clock = new ManualClock();
    const s = loadShedder({ window: '10s', minRequests: 0, clock });
    expect(s.stats().requests).toBe(0);
  });
});

describe('LoadShedder decisions', () => {
  it('refuses with the SRE formula over the requests before the call: (requests - k × accepts) / (requests + 1)', async () => {
    const clock = new ManualClock();
    // A random source that refuses a call whose probability is above 0.5.
    const s = loadShedder({ minRequests: 0, random: () => 0.5, clock });
    const p = pipeline(s);
    await p.tryExecute(ok); // judged on nothing: 0
    expect(s.stats()).toMatchObject({ requests: 1, accepts: 1, refusalRate: 0 });
    await p.tryExecute(fail); // (1 - 2) / 2 < 0
    await p.tryExecute(fail); // (2 - 2) / 3 = 0
    expect(s.refusalProbability()).toBe(0.25); // (3 - 2) / 4
    await p.tryExecute(fail); // 0.25: let through
    expect(s.stats()).toMatchObject({ requests: 4, accepts: 1, refusalRate: 0.4, admitted: 4 });
    await p.tryExecute(fail); // (4 - 2) / 5 = 0.4: let through
    const sixth = await p.tryExecute(ok); // (5 - 2) / 6 = 0.5: not above 0.5, let through
    expect(sixth.ok).toBe(true);
    expect(s.stats()).toMatchObject({ requests: 6, accepts: 2, admitted: 6 });
    const seventh = await p.tryExecute(fail); // (6 - 4) / 7 < 0.5
    expect(seventh.ok).toBe(false);
    expect(s.stats().admitted).toBe(7);
  });

  it('refuses a call whose probability is above the random draw, with a LoadShedError', async () => {
    const clock = new ManualClock();
    const events: LoadShedEvent[] = [];
    const s = loadShedder({ name: 'api', minRequests: 0, random: () => 0.3, clock, debug: true });
    s.onShed((e) => events.push(e));
    const p = pipeline(s);
    await p.tryExecute(fail); // judged on nothing: let through
    const r = await p.tryExecute(fail); // (1 - 0) / 2 = 0.5 > 0.3: refused
    expect(r.ok).toBe(false);
    const error = (r as { error: unknown }).error;
    expect(isLoadShedError(error)).toBe(true);
    expect(error).toBeInstanceOf(LoadShedError);
    expect(error).toMatchObject({
      code: 'ERR_BREAKWATER_LOAD_SHED',
      policyName: 'api',
      criticality: 'critical',
      probability: 0.5,
    });
    expect(events).toEqual([
      { criticality: 'critical', probability: 0.5, refusalRate: 0.5, reason: 'accepts' },
    ]);
    expect(s.stats()).toMatchObject({ admitted: 1, requests: 2 });
    expect(s.stats().refused.critical).toBe(1);
  });

  it('hands out refusals that a later refusal of another call never changes', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 0, random: () => 0, clock });
    const p = pipeline(s);
    const refusal = async (criticality: Criticality) => {
      for (let i = 0; i < 100; i++) {
        const r = await p.tryExecute(fail, { criticality });
        if (!r.ok && isLoadShedError(r.error)) return r.error;
      }
      throw new Error(`no ${criticality} call was refused`);
    };
    const kept = await refusal('sheddable');
    const seen = {
      criticality: kept.criticality,
      probability: kept.probability,
      message: kept.message,
    };
    expect(seen.criticality).toBe('sheddable');
    const other = await refusal('critical-plus');
    expect(other.criticality).toBe('critical-plus');
    expect({
      criticality: kept.criticality,
      probability: kept.probability,
      message: kept.message,
    }).toEqual(seen);
    // The preallocated error carries nothing of one call: the shed event has the probability.
    expect(kept.probability).toBeNaN();
  });

  it('says a refusal came from the load signal, and in debug mode how late the event loop ran', async () => {
    const clock = new ManualClock();
    const build = (debug: boolean) => {
      const signal = eventLoopLoad({
        clock,
        interval: 100,
        step: 0.99,
        maxLevel: 0.99,
        source: () => ({ utilization: 0.2, lagMs: 426 }),
      });
      return { signal, s: loadShedder({ name: 'inbound', signal, random: () => 0, clock, debug }) };
    };
    const reading = 'the event loop ran 426 ms late (maxLag 100 ms)';
    for (const debug of [false, true]) {
      const { signal, s } = build(debug);
      const events: LoadShedEvent[] = [];
      s.onShed((e) => events.push(e));
      const p = pipeline(s);
      await p.tryExecute(ok); // starts the sampling
      await clock.advanceAsync(100); // one late sample: level 0.99
      const r = await p.tryExecute(ok);
      signal.dispose();
      expect(r.ok).toBe(false);
      const error = (r as { error: LoadShedError }).error;
      expect(error.reason).toBe('signal');
      expect(error.message).not.toMatch(/accepted/);
      expect(error.message).toMatch(/load signal reports this process overloaded/);
      expect(events[0]).toMatchObject({ reason: 'signal', reading });
      if (debug) expect(error.message).toContain(reading);
    }
  });

  it('never refuses more than maxRefusalRate of the calls, so some still reach the dependency', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 0, maxRefusalRate: 0.8, random: () => 0.85, clock });
    const p = pipeline(s);
    let reached = 0;
    for (let i = 0; i < 50; i++) {
      await p.tryExecute(() => {
        reached++;
        return fail();
      });
    }
    expect(s.stats().refusalRate).toBe(0.8);
    expect(reached).toBe(50); // a draw of 0.85 is never below 0.8
  });

  it('refuses nothing while the window holds fewer than minRequests requests', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 10, random: () => 0, clock });
    const p = pipeline(s);
    for (let i = 0; i < 10; i++) expect((await p.tryExecute(fail)).ok).toBe(false);
    // 10 requests, none accepted: 10 / 11, capped at 0.9.
    expect(s.stats()).toMatchObject({ admitted: 10, refusalRate: 0.9 });
    // The 11th call is judged on 10 requests, the floor: (10 - 0) / 11, and a draw of 0 refuses it.
    const eleventh = await p.tryExecute(ok);
    expect(isLoadShedError((eleventh as { error?: unknown }).error)).toBe(true);
  });

  it('forgets requests once they leave the window', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ window: 60_000, minRequests: 0, random: () => 1, clock });
    const p = pipeline(s);
    for (let i = 0; i < 10; i++) await p.tryExecute(fail);
    expect(s.stats().requests).toBe(10);
    clock.advance(59_000);
    expect(s.stats().requests).toBe(10);
    clock.advance(1_000);
    expect(s.stats()).toMatchObject({ requests: 0, accepts: 0, refusalRate: 0 });
  });

  it('lets refusals fall as soon as the recent part of the window sees calls accepted', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ window: 60_000, minRequests: 5, random: () => 0.99, clock });
    const p = pipeline(s);
    // 30 s of failures, 10 calls a second.
    for (let t = 0; t < 300; t++) {
      await p.tryExecute(fail);
      clock.advance(100);
    }
    expect(s.stats().refusalRate).toBe(0.9);
    // The dependency is back: calls that get through succeed.
    for (let t = 0; t < 100; t++) {
      await p.tryExecute(ok);
      clock.advance(100);
    }
    // The whole window still says 300 failures against 100 successes, (400 - 200) / 401;
    // its last 5 s say 50 successes of 50.
    const { requests, accepts, refusalRate } = s.stats();
    expect(requests).toBe(400);
    expect(accepts).toBe(100);
    expect(refusalRate).toBe(0);
  });

  it('does not count calls its caller cancelled, or that a policy inside it refused', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    breaker.isolate();
    const s = loadShedder({ minRequests: 0, random: () => 1, clock });
    await pipeline(s, breaker).tryExecute(ok);
    const controller = new AbortController();
    const call = pipeline(s).tryExecute(
      ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      { signal: controller.signal },
    );
    controller.abort(new Error('caller left'));
    await call;
    expect(s.stats()).toMatchObject({ requests: 0, accepts: 0, admitted: 2 });
  });

  it('counts errors handle turns down and results handleResult picks as it is told', async () => {
    const clock = new ManualClock();
    const s = loadShedder({
      minRequests: 0,
      random: () => 1,
      handle: (e) => (e as Error).message !== 'not found',
      handleResult: (r: { status: number }) => r.status === 503,
      clock,
    });
    const p = pipeline(s);
    await p.tryExecute(() => Promise.reject(new Error('not found'))); // accepted
    await p.tryExecute(() => ({ status: 200 })); // accepted
    await p.tryExecute(() => ({ status: 503 })); // not accepted
    await p.tryExecute(() => Promise.reject(new Error('boom'))); // not accepted
    expect(s.stats()).toMatchObject({ requests: 4, accepts: 2 });
  });

  it('runs synchronous calls too (executeSync), and calls alone (execute)', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 0, clock });
    expect(pipeline(s).executeSync(() => 7)).toBe(7);
    await expect(s.execute(() => 8)).resolves.toBe(8);
    expect(s.stats()).toMatchObject({ requests: 2, accepts: 2, admitted: 2 });
  });
});

describe('Criticality', () => {
  /** A shedder whose window holds `n` requests of each level and `accepts` accepts. */
  async function primed(perLevel: number, accepts: number) {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 0, random: () => 1, clock });
    const p = pipeline(s);
    let left = accepts;
    for (const criticality of [
      'sheddable',
      'sheddable-plus',
      'critical',
      'critical-plus',
    ] as const) {
      for (let i = 0; i < perLevel; i++) {
        await p.tryExecute(() => (left-- > 0 ? ok() : fail()), { criticality });
      }
    }
    return s;
  }

  it('refuses the lowest levels first: a level only once every level below is refused entirely', async () => {
    // 400 requests, 100 accepted: (400 - 200) / 401 of them to refuse, about 199.5 calls.
    const s = await primed(100, 100);
    const rate = s.stats().refusalRate;
    expect(rate).toBeCloseTo(200 / 401, 12);
    const mass = rate * 400;
    expect(s.refusalProbability('sheddable')).toBe(1);
    expect(s.refusalProbability('sheddable-plus')).toBeCloseTo((mass - 100) / 100, 12);
    expect(s.refusalProbability('critical')).toBe(0);
    expect(s.refusalProbability('critical-plus')).toBe(0);
  });

  it('refuses the top level only with what every level below cannot absorb, never entirely', async () => {
    const s = await primed(100, 0);
    expect(s.stats().refusalRate).toBe(0.9);
    // 360 refusals of 400: the three lower levels take 300, the top level 60 of its 100.
    expect(s.refusalProbability('critical')).toBe(1);
    expect(s.refusalProbability('critical-plus')).toBeCloseTo(0.6, 12);
  });

  it('takes criticality as a call option, refusing an unknown one with an OptionsError', async () => {
    const s = loadShedder();
    const error = await pipeline(s)
      .execute(ok, { criticality: 'urgent' as Criticality })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).toContain('criticality');
    expect(s.stats().requests).toBe(0);
  });
});

describe('LoadShedder in a registry', () => {
  it('is built from config data, durations as strings, and shows in the snapshot', async () => {
    const registry = new Registry({
      loadShedders: { api: { k: 1.5, window: '30s', maxRefusalRate: 0.5, minRequests: 0 } },
    });
    const s = registry.get('loadShedder', 'api');
    await pipeline(s as never).tryExecute(fail);
    const entry = registry.snapshot().instances.find((i) => i.name === 'api');
    expect(entry).toMatchObject({
      kind: 'loadShedder',
      stats: { requests: 1, accepts: 0, refusalRate: 0.5 },
    });
    registry.dispose();
  });

  it('keeps its window when reconfigured, and starts a new one when the window changes', async () => {
    const clock = new ManualClock();
    const s = loadShedder({ minRequests: 0, clock });
    await pipeline(s).tryExecute(fail);
    s.reconfigure({ minRequests: 0, k: 3 });
    expect(s.stats().requests).toBe(1);
    s.reconfigure({ minRequests: 0, window: '10s' });
    expect(s.stats().requests).toBe(0);
    expect(() => s.reconfigure({ maxRefusalRate: 2 })).toThrow(OptionsError);
  });
});

describe('LoadShedder decisions call by call', () => {
  it.each([
    [2, 10],
    [1.5, 7],
    [3, 1],
  ])(
    'k %s, minRequests %s: refuses exactly the calls the formula gives a chance, skipped or not',
    async (k, minRequests) => {
      const clock = new ManualClock();
      // A draw of 0 refuses every call whose refusal probability is above 0.
      const shed = loadShedder({ clock, k, minRequests, maxRefusalRate: 0.9, random: () => 0 });
      const p = pipeline(shed);
      let requests = 0;
      let accepts = 0;
      const decisions: boolean[] = [];
      const expected: boolean[] = [];
      // Healthy, then failing, then healthy again, then a mix: all in one bucket of the window.
      const outcomes = [
        ...Array.from({ length: 40 }, () => true),
        ...Array.from({ length: 120 }, () => false),
        ...Array.from({ length: 60 }, () => true),
        ...Array.from({ length: 200 }, (_, i) => i % 3 === 0),
      ];
      for (const good of outcomes) {
        expected.push(requests - k * accepts > 0 && requests >= minRequests);
        const r = await p.tryExecute(good ? ok : fail);
        const refused = !r.ok && isLoadShedError(r.error);
        decisions.push(refused);
        requests++;
        if (!refused && good) accepts++;
      }
      expect(decisions).toEqual(expected);
      expect(decisions.some((d) => d)).toBe(true);
      expect(decisions.some((d) => !d)).toBe(true);
    },
  );
});
