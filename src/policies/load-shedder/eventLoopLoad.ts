import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  clockOption,
  duration,
  fn,
  numberIn,
  onlyArguments,
} from '../../validation/validate.js';

/**
 * A reason of the process's own to refuse calls, read by a load shedder beside its formula
 * (`loadShedder({ signal })`): the shedder refuses at least `level()` of the calls.
 */
export interface LoadSignal {
  /** The share of calls to refuse now, in [0, 1). */
  level(): number;
  /** Stops whatever it runs (a sampling timer). */
  dispose(): void;
  /**
   * Optional: how long, in ms, its level takes to fall back to 0 if the load stays within its
   * limits from now on (0 at rest); the server middleware's `Retry-After` for shed requests.
   */
  settleMs?(): number;
  /**
   * Optional: what its last reading found, in words, for the shedder's events and debug errors
   * (`eventLoopLoad()`: "the event loop ran 426 ms late (maxLag 100 ms)").
   */
  describe?(): string;
}

/** One reading of the event loop: how busy it was and how late it ran. */
export interface EventLoopSample {
  /** The share of the time since the last sample the loop spent running code, in [0, 1]. */
  readonly utilization: number;
  /** How late the sampling timer fired, in ms: the loop's lag. */
  readonly lagMs: number;
}

/** Options of {@link eventLoopLoad}. */
export interface EventLoopLoadOptions {
  /** Busier than this (a share of the time, in (0, 1]) is overloaded. @default 0.9 */
  readonly maxUtilization?: number;
  /** Later than this, in ms, is overloaded. @default 100 */
  readonly maxLag?: number | DurationString;
  /** How often it samples, in ms, in [10, 60000]. @default 500 */
  readonly interval?: number | DurationString;
  /** Each sample's step up while overloaded, in (0, 1]. @default 0.1 */
  readonly step?: number;
  /** The most it asks to refuse, in [0, 1). @default 0.9 */
  readonly maxLevel?: number;
  /**
   * Where samples come from, for tests. @default the event loop's utilisation since the last
   * sample (`performance.eventLoopUtilization`) and its p99 delay over the interval
   * (`monitorEventLoopDelay`, reset each sample), or the sampling timer's lateness without it
   */
  readonly source?: (elapsedMs: number, lateMs: number) => EventLoopSample;
  /** @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link EventLoopLoadOptions}. */
export const eventLoopLoadDefaults = Object.freeze({
  maxUtilization: 0.9,
  maxLag: 100,
  interval: 500,
  step: 0.1,
  maxLevel: 0.9,
});

type Utilization = { idle: number; active: number; utilization: number };
type Perf = { eventLoopUtilization?: (a?: Utilization, b?: Utilization) => Utilization };
interface DelayHistogram {
  enable(): boolean;
  disable(): boolean;
  reset(): void;
  percentile(p: number): number;
}
interface PerfHooks {
  monitorEventLoopDelay?: (options: { resolution: number }) => DelayHistogram;
  performance?: Perf;
}

/** The tick of the delay histogram, in ms. */
const RESOLUTION_MS = 10;

/** A source of samples that may hold something while sampling (a histogram). */
interface Sampler {
  start(): void;
  read(elapsedMs: number, lateMs: number): EventLoopSample;
  stop(): void;
}

/**
 * The event loop's p99 delay and its utilisation since the last sample. Both come from
 * `node:perf_hooks` (through `process.getBuiltinModule`) or `globalThis.performance`, looked up
 * when sampling starts, never at module load or construction. The histogram is reset every
 * sample, so each reading covers the last interval only (a cumulative one hides a recent
 * overload behind a calm past). Where there is no histogram, the lag is the sampling timer's
 * lateness; where there is no `eventLoopUtilization` (Deno, Bun, edge runtimes), the
 * utilisation reads 0 and only the lag counts.
 */
function nodeSampler(): Sampler {
  let perf: Perf | undefined;
  let histogram: DelayHistogram | undefined;
  let last: Utilization | undefined;
  return {
    start() {
      if (perf === undefined) {
        const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
          .process;
        const hooks = proc?.getBuiltinModule?.('node:perf_hooks') as PerfHooks | undefined;
        perf = hooks?.performance ?? (globalThis as { performance?: Perf }).performance ?? {};
        histogram = hooks?.monitorEventLoopDelay?.({ resolution: RESOLUTION_MS });
      }
      histogram?.reset();
      histogram?.enable();
      last = perf.eventLoopUtilization?.call(perf);
    },
    read(_elapsed, lateMs) {
      let lagMs = lateMs;
      if (histogram !== undefined) {
        // It records the time between its timer's ticks, the resolution included. NaN (nothing
        // recorded yet) compares false and leaves the timer's lateness.
        const p99 = histogram.percentile(99) / 1e6 - RESOLUTION_MS;
        if (p99 > lagMs) lagMs = p99;
        histogram.reset();
      }
      const elu = perf?.eventLoopUtilization;
      if (elu === undefined || last === undefined) return { utilization: 0, lagMs };
      const now = elu.call(perf);
      const since = elu.call(perf, now, last);
      last = now;
      return { utilization: since.utilization, lagMs };
    },
    stop() {
      histogram?.disable();
    },
  };
}

function givenSampler(source: (elapsedMs: number, lateMs: number) => EventLoopSample): Sampler {
  return { start() {}, read: source, stop() {} };
}

/**
 * A {@link LoadSignal} from the event loop of this process, for shedding inbound work: every
 * `interval` it samples how busy the loop was and its p99 delay over that interval; while
 * either is over its limit, the level rises by `step` a sample, and at once to the share of
 * the excess when that is higher (a p99 delay of 4 × `maxLag` asks to refuse 3/4), up to
 * `maxLevel`; once both are within, it falls by half a step a sample. Its timer runs only while the level is read (it stops after an
 * interval with no read), never keeps the process alive, and stops on `dispose()`.
 *
 * @example
 * ```ts
 * const inbound = loadShedder({ signal: eventLoopLoad({ maxUtilization: 0.9, maxLag: 100 }) });
 * app.use((req, res, next) => inbound.execute(() => next(), { criticality: 'sheddable' }));
 * ```
 */
export function eventLoopLoad(options?: EventLoopLoadOptions): LoadSignal {
  onlyArguments(arguments, 1, 'eventLoopLoad()');
  const o = checkOptionsObject(
    options,
    ['maxUtilization', 'maxLag', 'interval', 'step', 'maxLevel', 'source', 'clock'],
    '',
  );
  const d = eventLoopLoadDefaults;
  const maxUtilization = numberIn(o.maxUtilization, 'maxUtilization', d.maxUtilization, 0, 1, true);
  const maxLag = duration(o.maxLag, 'maxLag', d.maxLag, 0);
  const interval = duration(o.interval, 'interval', d.interval, 10, false, 60_000);
  const step = numberIn(o.step, 'step', d.step, 0, 1, true);
  const maxLevel = numberIn(o.maxLevel, 'maxLevel', d.maxLevel, 0, 0.999_999);
  const clock = clockOption<Clock>(o.clock, 'clock', systemClock);
  const given = fn<(elapsedMs: number, lateMs: number) => EventLoopSample>(
    o.source,
    'source',
    undefined,
  );
  const sampler = given === undefined ? nodeSampler() : givenSampler(given);
  let level = 0;
  let read = false;
  let last: EventLoopSample = { utilization: 0, lagMs: 0 };
  let timer: TimerHandle | undefined;
  let armedAt = 0;
  const sample = (): void => {
    const now = clock.now();
    const elapsed = now - armedAt;
    last = sampler.read(elapsed, Math.max(0, elapsed - interval));
    const { utilization, lagMs } = last;
    const over = Math.max(utilization / maxUtilization, maxLag > 0 ? lagMs / maxLag : 0);
    level =
      utilization > maxUtilization || lagMs > maxLag
        ? Math.min(maxLevel, Math.max(level + step, over > 1 ? 1 - 1 / over : 0))
        : Math.max(0, level - step / 2);
    // Sampling goes on while someone reads the level, or while it is not back to 0.
    if (read || level > 0) arm(now);
    else stop();
    read = false;
  };
  const arm = (now: number): void => {
    armedAt = now;
    timer = clock.setTimer(sample, interval, false);
  };
  const stop = (): void => {
    timer = undefined;
    sampler.stop();
  };
  return {
    level() {
      read = true;
      if (timer === undefined) {
        sampler.start();
        arm(clock.now());
      }
      return level;
    },
    settleMs() {
      return level > 0 ? Math.ceil(level / (step / 2) - 1e-9) * interval : 0;
    },
    dispose() {
      if (timer !== undefined) {
        clock.clearTimer(timer);
        stop();
      }
      level = 0;
    },
    describe() {
      const late = `the event loop ran ${Math.round(last.lagMs)} ms late (maxLag ${maxLag} ms)`;
      const busy = `the event loop was busy ${Math.round(last.utilization * 100)} % of the time (maxUtilization ${Math.round(maxUtilization * 100)} %)`;
      if (last.lagMs > maxLag) return last.utilization > maxUtilization ? `${late}, ${busy}` : late;
      if (last.utilization > maxUtilization) return busy;
      return `refusing ${Math.round(level * 100)} % while it recovers (last: ${Math.round(last.lagMs)} ms late, busy ${Math.round(last.utilization * 100)} %)`;
    },
  };
}
