/**
 * Model-based tests: random command sequences drive a real breaker (through a pipeline, on a
 * ManualClock) and the reference model in ./model.ts, and every step is checked against it.
 *
 * Reading `state` (or `stats()`) applies pending time-driven transitions and expires time
 * buckets, so checking after every command could hide bugs in code paths that forget to do
 * so themselves. Each run is therefore either eager (state read and compared after every
 * command) or lazy (compared only at `observe` commands and at the end); both check admission,
 * rejection errors, the event stream and generations after every command.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
  type Disposer,
  ErrorCode,
  IsolatedCircuitError,
  pipeline,
  type StateChangeEvent,
  type TransitionReason,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred } from '../../support/async.js';
import {
  BreakerModel,
  isTimeDriven,
  type ModelCall,
  type ModelConfig,
  type ModelOutcome,
  type ModelWindow,
} from './model.js';

type FinishOutcome = 'ok' | 'fail' | 'slow' | 'ignored';

type Command =
  | { readonly t: 'start' }
  | { readonly t: 'finish'; readonly i: number; readonly outcome: FinishOutcome }
  /** Calls that end at once (through executeSync): true for a success. */
  | { readonly t: 'burst'; readonly outcomes: readonly boolean[] }
  | { readonly t: 'advance'; readonly ms: number }
  | { readonly t: 'isolate' }
  | { readonly t: 'endIsolation'; readonly i: number }
  | { readonly t: 'forceOpen' }
  | { readonly t: 'reset' }
  | { readonly t: 'trip' }
  | { readonly t: 'disable' }
  | { readonly t: 'metricsOnly' }
  | { readonly t: 'observe' };

const manualArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ t: 'isolate' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('endIsolation' as const), i: fc.nat({ max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'forceOpen' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'reset' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'trip' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'disable' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'metricsOnly' as const }) },
);

function commandArb(manualWeight: number): fc.Arbitrary<Command> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant({ t: 'start' as const }) },
    {
      weight: 10,
      arbitrary: fc.record({
        t: fc.constant('finish' as const),
        // Index from the newest call, biased to it so that probes get finished too.
        i: fc.oneof(fc.constant(0), fc.nat({ max: 7 })),
        outcome: fc.constantFrom<FinishOutcome>('ok', 'ok', 'fail', 'fail', 'slow', 'ignored'),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        t: fc.constant('burst' as const),
        outcomes: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        t: fc.constant('advance' as const),
        ms: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 100, max: 700 })),
      }),
    },
    { weight: manualWeight, arbitrary: manualArb },
    { weight: 2, arbitrary: fc.constant({ t: 'observe' as const }) },
  );
}

/** Closed-state traffic only: calls that end at once, and time passing (window expiry). */
const trafficArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('burst' as const),
      // Mostly successes, so that windows stay closed long enough for buckets to expire.
      outcomes: fc.array(fc.constantFrom(true, true, true, false), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 400 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'observe' as const }) },
);

/**
 * Runs of up to 40 commands; some runs mostly make calls, others mostly steer by hand, others
 * are only traffic and time.
 */
const commandsArb = fc.oneof(
  ...[1, 4, 12].map((manualWeight) =>
    fc.array(commandArb(manualWeight), { maxLength: 40, size: 'max' }),
  ),
  fc.array(trafficArb, { maxLength: 40, size: 'max' }),
);

const halfOpenArb = fc
  .record({
    probes: fc.integer({ min: 1, max: 4 }),
    // Ratios whose products with 1..4 probes are exact, so ceil() is unambiguous.
    successRatio: fc.constantFrom(0.25, 0.5, 0.75, 1),
    concurrency: fc.integer({ min: 1, max: 4 }),
    maxWait: fc.integer({ min: 50, max: 1000 }),
  })
  .map((h) => ({ ...h, maxConcurrent: Math.min(h.concurrency, h.probes) }));

function configArb(windowArb: fc.Arbitrary<ModelWindow>): fc.Arbitrary<ModelConfig> {
  return fc
    .record({
      window: windowArb,
      failureRateThreshold: fc.constantFrom(0.25, 0.5, 0.75, 1),
      slowCallDuration: fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }),
      slowCallRateThreshold: fc.constantFrom(0.5, 1),
      breakDuration: fc.integer({ min: 50, max: 500 }),
      backoff: fc.option(
        fc.record({
          multiplier: fc.constantFrom(1, 1.5, 2, 3),
          cap: fc.integer({ min: 1, max: 8 }),
        }),
        { nil: undefined },
      ),
      halfOpen: halfOpenArb,
    })
    .map((c) => ({
      window: c.window,
      failureRateThreshold: c.failureRateThreshold,
      slowCallDuration: c.slowCallDuration,
      slowCallRateThreshold: c.slowCallRateThreshold,
      breakDuration: c.breakDuration,
      breakBackoff: c.backoff && {
        multiplier: c.backoff.multiplier,
        maxDuration: c.breakDuration * c.backoff.cap,
      },
      probes: c.halfOpen.probes,
      maxConcurrent: c.halfOpen.maxConcurrent,
      successRatio: c.halfOpen.successRatio,
      maxWait: c.halfOpen.maxWait,
    }));
}

const consecutiveArb: fc.Arbitrary<ModelWindow> = fc.record({
  kind: fc.constant('consecutive' as const),
  threshold: fc.integer({ min: 1, max: 4 }),
});

const countArb: fc.Arbitrary<ModelWindow> = fc.integer({ min: 1, max: 6 }).chain((size) =>
  fc.record({
    kind: fc.constant('count' as const),
    size: fc.constant(size),
    minimumCalls: fc.integer({ min: 1, max: size }),
  }),
);

const timeArb: fc.Arbitrary<ModelWindow> = fc
  .record({
    // Bucket widths in the range of the clock advances, plus odd ones (non-integer widths).
    width: fc.oneof(fc.constantFrom(50, 100, 200), fc.integer({ min: 20, max: 300 })),
    buckets: fc.integer({ min: 1, max: 5 }),
    minimumCalls: fc.integer({ min: 1, max: 4 }),
    extra: fc.constantFrom(0, 0, 1, 7),
  })
  .map(({ width, buckets, minimumCalls, extra }) => ({
    kind: 'time' as const,
    duration: width * buckets + extra,
    buckets,
    minimumCalls,
  }));

function toOptions(c: ModelConfig, clock: ManualClock): CircuitBreakerOptions {
  return {
    window: c.window,
    failureRateThreshold: c.failureRateThreshold,
    slowCallDuration: c.slowCallDuration,
    slowCallRateThreshold: c.slowCallRateThreshold,
    breakDuration: c.breakDuration,
    breakBackoff: c.breakBackoff,
    halfOpen: {
      probes: c.probes,
      maxConcurrent: c.maxConcurrent,
      successRatio: c.successRatio,
      maxWait: c.maxWait,
    },
    clock,
  };
}

/** (from, to) pairs a breaker may take on its own, with the reasons allowed for each. */
const AUTOMATIC: Record<string, readonly TransitionReason[]> = {
  'closed->open': [
    'failure-rate',
    'slow-call-rate',
    'consecutive-failures',
    'consecutive-slow-calls',
  ],
  'open->half-open': ['break-elapsed'],
  'half-open->closed': ['probes-succeeded'],
  'half-open->open': ['probes-failed', 'half-open-timeout'],
};

/** A refusal by another breakwater policy, which the breaker under test must ignore. */
async function foreignRefusal(): Promise<unknown> {
  const other = new CircuitBreaker({ name: 'other' });
  other.forceOpen();
  const result = await pipeline(other).tryExecute(() => 0);
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
}

interface InFlight {
  readonly model: ModelCall;
  /** The breaker's generation right after admitting the call. */
  readonly generation: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly settled: Promise<unknown>;
}

async function runScenario(
  config: ModelConfig,
  start: number,
  eager: boolean,
  commands: readonly Command[],
): Promise<void> {
  const refusal = await foreignRefusal();
  const clock = new ManualClock(start);
  const breaker = new CircuitBreaker(toOptions(config, clock));
  const p = pipeline(breaker);
  const model = new BreakerModel(config, start);
  const events: StateChangeEvent[] = [];
  const inFlight: InFlight[] = [];
  const isolations: { id: number; dispose: Disposer }[] = [];
  let manual = false;
  let where = 'before the first command';
  // A throwing listener would only reach the listener error handler: collect instead.
  const badTransitions: string[] = [];
  const fail = (message: string): never => {
    throw new Error(`${where}: ${message}`);
  };

  breaker.onStateChange((e) => {
    events.push(e);
    if (e.reason === 'manual') {
      if (!manual) badTransitions.push(`manual ${e.from}->${e.to} outside a manual command`);
    } else if (!AUTOMATIC[`${e.from}->${e.to}`]?.includes(e.reason)) {
      badTransitions.push(`${e.from}->${e.to} (${e.reason}) is not allowed`);
    }
  });

  /** The breaker's events so far must be the model's, but for time-driven ones not yet seen. */
  const checkEvents = (complete: boolean): void => {
    if (badTransitions.length > 0) fail(`transition ${badTransitions.join('; ')}`);
    const expected = model.transitions;
    if (events.length > expected.length) {
      fail(`breaker emitted ${events.length} transitions, model ${expected.length}`);
    }
    events.forEach((e, k) => {
      const m = expected[k]!;
      const got = { from: e.from, to: e.to, reason: e.reason, generation: e.generation };
      const want = { from: m.from, to: m.to, reason: m.reason, generation: m.generation };
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        fail(`transition #${k} is ${JSON.stringify(got)}, model says ${JSON.stringify(want)}`);
      }
      if (e.breakDuration !== m.breakDuration) {
        fail(`transition #${k} breakDuration ${e.breakDuration}, model ${m.breakDuration}`);
      }
      const w = m.window;
      if (w === undefined) {
        if (e.callsInWindow !== 0 || !Number.isNaN(e.failureRate)) {
          fail(`transition #${k} carries window figures, model has none`);
        }
      } else if (
        config.window.kind === 'consecutive'
          ? // A consecutive window reports the run that opened it, and no rate.
            e.callsInWindow !== (m.reason === 'consecutive-failures' ? w.failures : w.slowCalls) ||
            !Number.isNaN(e.failureRate) ||
            !Number.isNaN(e.slowCallRate)
          : e.callsInWindow !== w.calls ||
            e.failureRate !== w.failures / w.calls ||
            e.slowCallRate !== w.slowCalls / w.calls
      ) {
        fail(
          `transition #${k} window ${e.callsInWindow}/${e.failureRate}/${e.slowCallRate}, model ${JSON.stringify(w)}`,
        );
      }
    });
    const pending = expected.slice(events.length);
    if (complete && pending.length > 0) fail(`transitions not emitted: ${JSON.stringify(pending)}`);
    if (pending.some((m) => !isTimeDriven(m.reason))) {
      fail(`transitions not emitted: ${JSON.stringify(pending)}`);
    }
  };

  /** Reads the breaker (applying its lazy transitions) and compares everything. */
  const observe = (withStats: boolean): void => {
    const state: CircuitState = breaker.state;
    if (state !== model.state) fail(`state is ${state}, model says ${model.state}`);
    checkEvents(true);
    if (breaker.generation !== model.generation) {
      fail(`generation is ${breaker.generation}, model says ${model.generation}`);
    }
    if (state === 'half-open') {
      const probes = inFlight.filter((c) => c.generation === breaker.generation).length;
      if (probes !== model.probesInFlight) {
        fail(`${probes} probes in flight, model says ${model.probesInFlight}`);
      }
      if (probes > config.maxConcurrent) fail(`${probes} probes in flight > maxConcurrent`);
    }
    if (!withStats) return;
    const s = breaker.stats();
    // A disabled or forced-open breaker never reads its window again (every way out clears
    // it), and does not expire a time window's buckets meanwhile.
    const live = !(
      config.window.kind === 'time' &&
      (state === 'disabled' || state === 'forced-open')
    );
    const w = live
      ? model.windowCounts()
      : { calls: s.callsInWindow, failures: s.failuresInWindow, slowCalls: s.slowCallsInWindow };
    const got = {
      successes: s.successes,
      failures: s.failures,
      rejections: s.rejections,
      ignored: s.ignored,
      failuresInWindow: s.failuresInWindow,
      slowCallsInWindow: s.slowCallsInWindow,
      // A consecutive window's call count is not a documented quantity.
      callsInWindow: config.window.kind === 'consecutive' ? w.calls : s.callsInWindow,
    };
    const want = {
      successes: model.successes,
      failures: model.failures,
      rejections: model.rejections,
      ignored: model.ignored,
      failuresInWindow: w.failures,
      slowCallsInWindow: w.slowCalls,
      callsInWindow: w.calls,
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      fail(`stats ${JSON.stringify(got)}, model ${JSON.stringify(want)}`);
    }
    if (state === 'half-open' && s.probesInFlight !== model.probesInFlight) {
      fail(`stats().probesInFlight ${s.probesInFlight}, model ${model.probesInFlight}`);
    }
  };

  const manually = (action: () => void, modelAction: () => void): void => {
    manual = true;
    try {
      action();
    } finally {
      manual = false;
    }
    modelAction();
  };

  for (const [step, cmd] of commands.entries()) {
    where = `command #${step} ${JSON.stringify(cmd)} at t=${clock.now() - start}`;
    switch (cmd.t) {
      case 'start': {
        let called = false;
        const { promise: work, resolve, reject } = deferred();
        const promise = p.execute(() => {
          called = true;
          return work;
        });
        const settled = promise.then(
          (value) => ({ ok: true, value }),
          (error: unknown) => ({ ok: false, error }),
        );
        const generation = breaker.generation;
        const admitted = model.start();
        if (called !== (admitted !== undefined)) {
          fail(`breaker ${called ? 'admitted' : 'refused'} the call, model did not`);
        }
        if (admitted !== undefined) {
          inFlight.push({ model: admitted, generation, resolve, reject, settled });
          break;
        }
        const result = (await settled) as { ok: boolean; error?: unknown };
        const error = result.error;
        if (result.ok || !(error instanceof BrokenCircuitError)) {
          fail(`a refused call must reject with BrokenCircuitError, got ${String(error)}`);
        }
        const broken = error as BrokenCircuitError;
        if (model.state === 'forced-open') {
          if (!(broken instanceof IsolatedCircuitError) || broken.retryAfter !== Infinity) {
            fail('a forced-open breaker must refuse with IsolatedCircuitError');
          }
        } else {
          if (broken.code !== ErrorCode.CircuitOpen) fail(`refusal code ${broken.code}`);
          // Half-open: the most its probes may take to decide.
          const decideBy =
            model.halfOpenDeadline === Number.POSITIVE_INFINITY
              ? model.now + model.config.maxWait
              : model.halfOpenDeadline;
          const expected =
            model.state === 'open' ? model.openUntil - model.now : decideBy - model.now;
          if (broken.retryAfter !== expected) {
            fail(`retryAfter ${broken.retryAfter}, model says ${expected}`);
          }
        }
        break;
      }
      case 'finish': {
        if (inFlight.length === 0) break;
        const [call] = inFlight.splice(inFlight.length - 1 - (cmd.i % inFlight.length), 1);
        if (cmd.outcome === 'slow') {
          const ms = config.slowCallDuration ?? 1;
          clock.advance(ms);
          model.advance(ms);
        }
        const eventsBefore = events.length;
        const old = call!.generation !== breaker.generation;
        if (cmd.outcome === 'fail') call!.reject(new Error('dependency failed'));
        else if (cmd.outcome === 'ignored') call!.reject(refusal);
        else call!.resolve('value');
        await call!.settled;
        const outcome: ModelOutcome =
          cmd.outcome === 'fail' ? 'failure' : cmd.outcome === 'ignored' ? 'ignored' : 'success';
        model.finish(call!.model, outcome);
        // Only the clock may move the state while an old call's outcome is handled.
        if (old && events.slice(eventsBefore).some((e) => !isTimeDriven(e.reason))) {
          fail('a call admitted under an older generation changed the state');
        }
        break;
      }
      case 'burst':
        for (const succeed of cmd.outcomes) {
          let called = false;
          let thrown: unknown;
          try {
            p.executeSync(() => {
              called = true;
              if (!succeed) throw new Error('dependency failed');
              return 'value';
            });
          } catch (error) {
            thrown = error;
          }
          const admitted = model.start();
          if (called !== (admitted !== undefined)) {
            fail(`breaker ${called ? 'admitted' : 'refused'} a burst call, model did not`);
          }
          if (admitted !== undefined) model.finish(admitted, succeed ? 'success' : 'failure');
          else if (!(thrown instanceof BrokenCircuitError)) fail('a refused call must throw');
        }
        break;
      case 'advance':
        clock.advance(cmd.ms);
        model.advance(cmd.ms);
        break;
      case 'isolate': {
        let dispose!: Disposer;
        let id = -1;
        manually(
          () => {
            dispose = breaker.isolate();
          },
          () => {
            id = model.isolate();
          },
        );
        isolations.push({ id, dispose });
        break;
      }
      case 'endIsolation': {
        // Disposers stay in the list: calling one twice must be harmless.
        if (isolations.length === 0) break;
        const iso = isolations[cmd.i % isolations.length]!;
        manually(iso.dispose, () => model.endIsolation(iso.id));
        break;
      }
      case 'forceOpen':
        manually(
          () => breaker.forceOpen(),
          () => model.forceOpen(),
        );
        break;
      case 'reset':
        manually(
          () => breaker.reset(),
          () => model.reset(),
        );
        break;
      case 'trip':
        manually(
          () => breaker.trip(),
          () => model.trip(),
        );
        break;
      case 'disable':
        manually(
          () => breaker.disable(),
          () => model.disable(),
        );
        break;
      case 'metricsOnly':
        manually(
          () => breaker.metricsOnly(),
          () => model.metricsOnly(),
        );
        break;
      case 'observe':
        observe(true);
        break;
    }
    checkEvents(false);
    if (model.probesInFlight > config.maxConcurrent) fail('model admitted too many probes');
    if (eager) observe(false);
  }
  where = 'at the end';
  observe(true);
  const opens = events.filter((e) => e.to === 'open').length;
  expect(opens).toBe(model.transitions.filter((m) => m.to === 'open').length);
  for (const call of inFlight) call.resolve('late');
  await Promise.all(inFlight.map((c) => c.settled));
  expect(clock.pendingTimers).toBe(0);
}

function modelProperty(windowArb: fc.Arbitrary<ModelWindow>) {
  return fc.asyncProperty(
    configArb(windowArb),
    fc.integer({ min: 0, max: 100_000 }),
    fc.boolean(),
    commandsArb,
    async (config, start, eager, commands) => {
      await runScenario(config, start, eager, commands);
    },
  );
}

/**
 * Traffic whose clock advances are counted in bucket widths of the given time window. No
 * `observe`: reading stats() expires buckets, which would hide expiry bugs (every run still
 * ends with a full comparison).
 */
function trafficInBuckets(width: number): fc.Arbitrary<Command> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        t: fc.constant('burst' as const),
        outcomes: fc.array(fc.constantFrom(true, true, true, false), {
          minLength: 1,
          maxLength: 4,
        }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: -1, max: 1 }))
        .map(([halves, jitter]) => ({
          t: 'advance' as const,
          ms: Math.max(1, Math.round((halves * width) / 2) + jitter),
        })),
    },
  );
}

/**
 * Time windows whose rates are judgeable with few calls, under traffic only: the runs where
 * expiring buckets, not new failures, bring a window back to its minimum number of calls.
 */
const expiryProperty = fc.asyncProperty(
  fc
    .record({
      config: configArb(timeArb),
      width: fc.constantFrom(20, 50, 100),
      buckets: fc.integer({ min: 3, max: 6 }),
      minimumCalls: fc.integer({ min: 2, max: 3 }),
      failureRateThreshold: fc.constantFrom(0.25, 0.5),
    })
    .chain(({ config, width, buckets, minimumCalls, failureRateThreshold }) =>
      fc.tuple(
        fc.constant({
          ...config,
          window: { kind: 'time' as const, duration: width * buckets, buckets, minimumCalls },
          failureRateThreshold,
          slowCallDuration: undefined,
        }),
        fc.array(trafficInBuckets(width), { maxLength: 40, size: 'max' }),
      ),
    ),
  fc.integer({ min: 0, max: 100_000 }),
  fc.boolean(),
  async ([config, commands], start, eager) => {
    await runScenario(config, start, eager, commands);
  },
);

describe('circuit breaker against the reference model', () => {
  it('consecutive window: every step matches the model', async () => {
    await fc.assert(modelProperty(consecutiveArb), { numRuns: 1000 });
  });

  it('count window: every step matches the model', async () => {
    await fc.assert(modelProperty(countArb), { numRuns: 1000 });
  });

  it('time window: every step matches the model', async () => {
    await fc.assert(modelProperty(timeArb), { numRuns: 1000 });
  });

  it('time window under traffic: bucket expiry matches the model', async () => {
    await fc.assert(expiryProperty, { numRuns: 1000 });
  });
});
