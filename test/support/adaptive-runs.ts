/**
 * The adaptive limit's runs on the queueing simulator (`queueing.ts`), defined once: the tests
 * of test/policies/adaptive-limit/ check them, and a chart script may call them for their
 * per-second series. Each run is seeded, so it gives the same figures on every machine.
 *
 * The dependency: `C` workers with exponential service times of mean 20 ms behind a FIFO queue
 * (so it serves C / 20 ms calls a second, and its latency grows with the calls beyond C).
 *
 * @example
 * ```ts
 * const run = await convergenceRun();
 * for (const s of run.series) console.log(s.second, s.limit, s.inFlight, s.p50, s.p99);
 * ```
 */
import {
  type AdaptiveLimit,
  type AdaptiveLimitOptions,
  adaptiveLimit,
  type LimitChangeEvent,
  pipeline,
} from '../../src/index.js';
import { type ClientTotals, percentile, Simulation } from './queueing.js';

/** One simulated second of a run. */
export interface AdaptiveSecond {
  /** 0 for [0, 1000) ms after the start, and so on. */
  readonly second: number;
  /** The limit at the end of the second. */
  readonly limit: number;
  /** Calls at the dependency (in service or in its queue), averaged over the second. */
  readonly inFlight: number;
  /** Latency (end - start) of the admitted calls that ended in the second: median and p99, ms. */
  readonly p50: number;
  readonly p99: number;
  /** Calls admitted and refused in the second. */
  readonly admitted: number;
  readonly refused: number;
  /** The limit's recent and baseline latency at the end of the second, ms. */
  readonly recentLatency: number;
  readonly baselineLatency: number;
}

/** A change of the limit, with when it happened. */
export interface AdaptiveChange extends LimitChangeEvent {
  /** Simulated ms since the start. */
  readonly at: number;
  /** The window that made it: 1 for the first to end. */
  readonly window: number;
}

/** A finished run. */
export interface AdaptiveRun {
  readonly sim: Simulation;
  readonly limit: AdaptiveLimit;
  readonly series: readonly AdaptiveSecond[];
  /** Every change of the limit, in order. */
  readonly changes: readonly AdaptiveChange[];
  /** Counts per client group. */
  readonly totals: ReadonlyMap<string, ClientTotals>;
}

/** Mean service time of the dependency, in ms. */
export const SERVICE_MS = 20;

/** Builds a simulation and an adaptive limit on its clock, with the probes every run records. */
function setUp(
  seed: number,
  workers: number,
  options: AdaptiveLimitOptions = {},
  simOptions: { abortable?: boolean; keepCalls?: boolean } = {},
) {
  let limit: AdaptiveLimit | undefined;
  const sim = new Simulation({
    seed,
    workers,
    serviceMs: SERVICE_MS,
    keepCalls: simOptions.keepCalls ?? false,
    abortable: simOptions.abortable ?? false,
    probes: {
      limit: () => limit!.limit,
      recentLatency: () => limit!.stats().recentLatency,
      baselineLatency: () => limit!.stats().baselineLatency,
    },
  });
  const made = adaptiveLimit({ clock: sim.clock, ...options });
  limit = made;
  const changes: AdaptiveChange[] = [];
  made.onLimitChange((e) => changes.push({ ...e, at: sim.now, window: made.stats().windows }));
  return { sim, limit: made, changes, via: pipeline(made) };
}

function finish(sim: Simulation, limit: AdaptiveLimit, changes: AdaptiveChange[]): AdaptiveRun {
  return {
    sim,
    limit,
    changes,
    totals: sim.totals,
    series: sim.series.map((s) => ({
      second: s.second,
      limit: s.probes.limit!,
      inFlight: s.inFlight,
      p50: s.p50,
      p99: s.p99,
      admitted: s.admitted,
      refused: s.refused,
      recentLatency: s.probes.recentLatency!,
      baselineLatency: s.probes.baselineLatency!,
    })),
  };
}

/** Options of the runs: the seed, and the limit's options over the defaults. */
export interface RunOptions {
  readonly seed?: number;
  readonly limit?: AdaptiveLimitOptions;
}

/**
 * Convergence: C = 50, 200 closed-loop clients (each calls again as soon as its call ends, or
 * 50 ms after a refusal), initial limit 20, for `seconds` (330: 30 to converge, then 300).
 */
export async function convergenceRun(
  o: RunOptions & { seconds?: number } = {},
): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 1, 50, { initialLimit: 20, ...o.limit });
  sim.closedLoop({ via, clients: 200, refusedPause: 50 });
  await sim.run((o.seconds ?? 330) * 1000);
  return finish(sim, limit, changes);
}

/**
 * A cold start above capacity: C = 10, 60 closed-loop clients (10 ms pause after a refusal),
 * the default initial limit of 20, so that the first window already queues at the dependency
 * and shows a latency about twice its own; for 60 s.
 */
export async function coldStartRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 10, 10, o.limit);
  sim.closedLoop({ via, clients: 60, refusedPause: 10 });
  await sim.run(60_000);
  return finish(sim, limit, changes);
}

/**
 * Steady overload: C = 50, Poisson arrivals at `overload` × what the dependency serves (2 by
 * default) for `seconds` (600).
 */
export async function overloadRun(
  o: RunOptions & { seconds?: number; overload?: number } = {},
): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 2, 50, o.limit);
  sim.openLoop({ via, rate: (o.overload ?? 2) * sim.capacityPerSecond });
  await sim.run((o.seconds ?? 600) * 1000);
  return finish(sim, limit, changes);
}

/**
 * Recovery: C = 50, 3 × overload for 600 s, then 0.7 × what it serves for 60 s.
 */
export async function recoveryRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 3, 50, o.limit);
  const load = sim.openLoop({ via, rate: 3 * sim.capacityPerSecond });
  sim.at(600_000, () => {
    load.rate = 0.7 * sim.capacityPerSecond;
  });
  await sim.run(660_000);
  return finish(sim, limit, changes);
}

/**
 * Drops: the dependency never answers (C = 50 workers that serve for ever), and every call
 * is given 5 s (`execute(fn, { timeout: 5000 })`), which it hears and stops at: each call ends
 * as a timeout at 5 s. 200 closed-loop clients, 100 ms pause after a refusal, for 120 s.
 */
export async function dropsRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 4, 50, o.limit, { abortable: true });
  sim.serviceMs = 1e12;
  sim.closedLoop({ via, clients: 200, refusedPause: 100, options: () => ({ timeout: 5000 }) });
  await sim.run(120_000);
  return finish(sim, limit, changes);
}

/**
 * Ramp-up: C = 50 with arrivals at 2 × what it serves for 60 s; then C = 500 and arrivals at
 * 1.2 × what 500 serve, for 60 s.
 */
export async function rampUpRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 5, 50, o.limit);
  const load = sim.openLoop({ via, rate: 2 * sim.capacityPerSecond });
  sim.at(60_000, () => {
    sim.workers = 500;
    load.rate = 1.2 * sim.capacityPerSecond;
  });
  await sim.run(120_000);
  return finish(sim, limit, changes);
}

/** Steady load below capacity: C = 50, arrivals at 0.7 × what it serves, for 600 s. */
export async function steadyRun(o: RunOptions & { seconds?: number } = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 6, 50, o.limit);
  sim.openLoop({ via, rate: 0.7 * sim.capacityPerSecond });
  await sim.run((o.seconds ?? 600) * 1000);
  return finish(sim, limit, changes);
}

/**
 * A shift of the dependency's own latency under steady load: C = 50, arrivals at 0.5 × what it
 * serves; at 300 s its service time grows from 20 to 30 ms (it still serves the load, at 0.75
 * of what it can then); 600 s in all.
 */
export async function baselineShiftRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 8, 50, o.limit);
  sim.openLoop({ via, rate: 0.5 * sim.capacityPerSecond });
  sim.at(300_000, () => {
    sim.serviceMs = 30;
  });
  await sim.run(600_000);
  return finish(sim, limit, changes);
}

/**
 * Partitions: C = 50, `{ critical: 0.9, sheddable: 0.1 }`. Batch calls (`sheddable`) flood at
 * 12 × what the dependency serves for 90 s. Live calls (`critical`, the default) arrive at 0.5 ×
 * what it serves for the first 60 s: group `live-start` in the first 10 s, while the limit
 * learns from its initial 20, then group `live`. The last 30 s are batch alone.
 */
export async function partitionsRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(o.seed ?? 9, 50, {
    partitions: { critical: 0.9, sheddable: 0.1 },
    ...o.limit,
  });
  const capacity = sim.capacityPerSecond;
  sim.openLoop({ via, rate: 0.5 * capacity, name: 'live-start', until: 10_000 });
  sim.openLoop({ via, rate: 0.5 * capacity, name: 'live', from: 10_000, until: 60_000 });
  sim.openLoop({
    via,
    rate: 12 * capacity,
    name: 'batch',
    options: () => ({ criticality: 'sheddable' }),
  });
  await sim.run(90_000);
  return finish(sim, limit, changes);
}

/**
 * CoDel on the adaptive limit: C = 10, arrivals at 1.5 × what it serves for 60 s, through a
 * limit with a queue of 1,000 (`queue: 'codel'`, `queueTimeout` 1 s), as the bulkhead's CoDel
 * run (test/policies/bulkhead/codel-simulation.test.ts). The calls are kept in `sim.calls`.
 */
export async function codelRun(o: RunOptions = {}): Promise<AdaptiveRun> {
  const { sim, limit, changes, via } = setUp(
    o.seed ?? 7,
    10,
    { maxQueue: 1_000, queueTimeout: 1_000, queue: 'codel', initialLimit: 10, ...o.limit },
    { keepCalls: true },
  );
  sim.openLoop({ via, rate: 1.5 * sim.capacityPerSecond });
  await sim.run(60_000);
  return finish(sim, limit, changes);
}

/** The p99 latency of the dependency with no queue: 10 closed-loop clients on C = 50, 60 s. */
export async function unloadedP99(seed = 7): Promise<number> {
  const sim = new Simulation({ seed, workers: 50, serviceMs: SERVICE_MS, keepCalls: true });
  sim.closedLoop({ via: { execute: (fn) => fn(undefined as never) }, clients: 10 });
  await sim.run(60_000);
  return percentile(
    sim.calls.filter((c) => c.outcome === 'ok').map((c) => c.end - c.start),
    0.99,
  );
}
