/**
 * A deterministic queueing simulator: a dependency with `workers` servers and exponential
 * service times behind its own FIFO queue, driven by closed-loop and open-loop clients through
 * any breakwater pipeline, on a ManualClock moved from event to event. Nothing sleeps and
 * nothing reads real time, so hundreds of simulated seconds run in a few real ones, and one
 * seed always gives the same calls and the same series.
 *
 * @example
 * ```ts
 * const sim = new Simulation({ seed: 1, workers: 4 });
 * const pool = bulkhead({ maxConcurrent: 4, maxQueue: 100, queue: 'codel', clock: sim.clock });
 * sim.openLoop({ via: pipeline(pool), rate: 300 });    // 1.5 x what 4 workers of 20 ms serve
 * await sim.run(60_000);
 * sim.calls.filter((c) => c.outcome === 'ok').map((c) => c.admitted - c.start);
 * ```
 */
import { type ExecuteOptions, type ExecutionContext, isPolicyRejection } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { seededRandom } from './random.js';

/** What the simulator calls: a pipeline, or anything with its `execute`. */
export interface Runner {
  execute<T>(fn: (context: ExecutionContext) => Promise<T>, options?: ExecuteOptions): Promise<T>;
}

/**
 * How a call ended: served, refused by a policy before the function ran, or failed (the
 * dependency's error, a timeout); `'pending'` while it has not.
 */
export type CallOutcome = 'ok' | 'refused' | 'failed' | 'pending';

/** One call, as the simulator saw it. Times are the clock's readings in ms; NaN where it never got there. */
export interface CallRecord {
  /** The name of the client group that made it. */
  readonly client: string;
  /** When the client called `execute`. */
  readonly start: number;
  /** When the pipeline first ran the function (`admitted - start` is the wait in the policies' queues). */
  admitted: number;
  /** Times the function ran (retries and hedges count). */
  attempts: number;
  /** When a worker of the dependency took its first attempt (after the dependency's own queue). */
  served: number;
  /** How long the worker took for that attempt. */
  service: number;
  /** When the call settled. */
  end: number;
  outcome: CallOutcome;
  /** A refusal's `reason` (`'full'`, `'codel'`, ...) or the error's name; undefined when ok. */
  reason: string | undefined;
}

/** Counts of one client group's calls since the start (kept whether or not `keepCalls` is). */
export interface ClientTotals {
  started: number;
  /** Calls the pipeline ran the function for. */
  admitted: number;
  ok: number;
  refused: number;
  failed: number;
}

/** One simulated second. */
export interface SecondStats {
  /** 0 for [0, 1000) ms after the start, and so on. */
  readonly second: number;
  /** Calls at the dependency (in service or in its queue), averaged over the second. */
  inFlight: number;
  /** Calls the pipeline admitted (ran the function for) in the second. */
  admitted: number;
  /** Calls refused by a policy in the second. */
  refused: number;
  /** Calls that failed in the second. */
  failed: number;
  /** Calls that ended ok in the second. */
  ok: number;
  /** Latency (end - start) of the calls admitted that ended in the second: median, p99, max; NaN if none. */
  p50: number;
  p99: number;
  /** Wait in the policies' queues (admitted - start) of the calls admitted in the second. */
  waitP99: number;
  waitMax: number;
  /** What each probe read at the end of the second. */
  probes: Record<string, number>;
}

export interface SimulationOptions {
  /** Seed of the random draws (service times, arrivals, think times). */
  readonly seed: number;
  /** Workers of the dependency (C); change later with `workers`. @default 1 */
  readonly workers?: number;
  /** Mean service time in ms (exponential). @default 20 */
  readonly serviceMs?: number;
  /**
   * An error to fail a served call with (it is still served first), or undefined for success.
   * Called once per attempt when its service ends.
   */
  readonly fail?: (sim: Simulation) => unknown;
  /**
   * When a call's signal aborts, it leaves the dependency's queue or, in service, rejects at once
   * with the signal's reason (the worker stays busy until its service would have ended). Reading
   * the signal costs, so this is off by default: aborted calls then run to their end.
   * @default false
   */
  readonly abortable?: boolean;
  /** Keep a {@link CallRecord} per call in `calls` (turn off for long runs). @default true */
  readonly keepCalls?: boolean;
  /** Read at the end of every second into `series[i].probes` (a limit, a queue length, ...). */
  readonly probes?: Record<string, () => number>;
}

/** Load from a closed-loop group: each of `clients` calls again when its last call ends. */
export interface ClosedLoopOptions {
  readonly via: Runner;
  readonly clients: number;
  /** Pause between a call's end and the next call, in ms: a number, or drawn by a function. @default 0 */
  readonly think?: number | ((random: () => number) => number);
  /**
   * Pause after a call a policy refused, in ms, instead of `think`: a client that calls again at
   * once after a refusal made without waiting would call for ever at one instant. @default think
   */
  readonly refusedPause?: number;
  readonly name?: string;
  /** Start at this time (ms). @default now */
  readonly from?: number;
  /** No call starts at or after this time. @default Infinity */
  readonly until?: number;
  /** Options for each call's `execute` (a deadline, ...). */
  readonly options?: () => ExecuteOptions | undefined;
}

/** Load from an open-loop group: Poisson arrivals at `rate` calls per second, whatever the answers. */
export interface OpenLoopOptions {
  readonly via: Runner;
  /** Calls per second (mean); change it later through the returned handle. */
  readonly rate: number;
  readonly name?: string;
  readonly from?: number;
  readonly until?: number;
  readonly options?: () => ExecuteOptions | undefined;
}

/** A load group started by the simulator; `stop()` ends it (calls in flight finish). */
export interface Load {
  /** Open loop: the arrival rate in calls per second, which may be changed at any time. */
  rate: number;
  stop(): void;
}

/** A ManualClock that also knows when its next timer is due, so the simulator can stop there. */
class SimClock extends ManualClock {
  private readonly due = new Heap<TimerEntry>();
  private readonly entries = new Map<unknown, TimerEntry>();
  private seq = 0;

  override setTimer(callback: () => void, ms: number): unknown {
    const entry: TimerEntry = { time: 0, seq: this.seq++, live: true };
    const handle = super.setTimer(() => {
      entry.live = false;
      this.entries.delete(handle);
      callback();
    }, ms);
    entry.time = this.now() + Math.max(0, ms);
    this.entries.set(handle, entry);
    this.due.push(entry);
    return handle;
  }

  override clearTimer(handle: unknown): void {
    super.clearTimer(handle);
    const entry = this.entries.get(handle);
    if (entry !== undefined) {
      entry.live = false;
      this.entries.delete(handle);
    }
  }

  /** When the next live timer is due, or Infinity. */
  nextDue(): number {
    for (let top = this.due.peek(); top !== undefined; top = this.due.peek()) {
      if (top.live) return top.time;
      this.due.pop();
    }
    return Number.POSITIVE_INFINITY;
  }
}

interface TimerEntry {
  time: number;
  readonly seq: number;
  live: boolean;
}

interface SimEvent {
  readonly time: number;
  readonly seq: number;
  readonly run: () => void;
}

/** A binary min-heap on (time, seq). */
class Heap<T extends { time: number; seq: number }> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && before(a[l]!, a[m]!)) m = l;
      if (r < a.length && before(a[r]!, a[m]!)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
    return top;
  }
}

function before(a: { time: number; seq: number }, b: { time: number; seq: number }): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/** One attempt at the dependency. */
interface Job {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly record: CallRecord | undefined;
  /** Queued, in service, or gone (its caller gave up while it was queued: it is skipped). */
  state: 'queued' | 'serving' | 'gone';
}

/**
 * Resolves once every promise continuation queued so far, and those they queue, has run, when
 * called from a continuation: Node runs the tick after the microtask queue has drained.
 */
function settled(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/** The q-quantile (0..1) of `values` by the nearest-rank method; NaN when empty. Sorts `values`. */
export function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))]!;
}

/** The simulator. Build it, add load (`closedLoop`, `openLoop`, `at`), then `await run(ms)`. */
export class Simulation {
  /** The clock to give every policy of the pipelines it drives. */
  readonly clock: ManualClock;
  /** The seeded source of every draw; policies that take a random source may share it. */
  readonly random: () => number;
  /** Every call, in the order they started (when `keepCalls`). */
  readonly calls: CallRecord[] = [];
  /** One entry per simulated second completed. */
  readonly series: SecondStats[] = [];
  /** Counts per client group (by the `name` given to `closedLoop` / `openLoop`). */
  readonly totals = new Map<string, ClientTotals>();
  /** Attempts that reached a worker of the dependency. */
  served = 0;
  /** Mean service time in ms; may be changed at any time (applies to services that start later). */
  serviceMs: number;

  private readonly simClock: SimClock;
  private readonly events = new Heap<SimEvent>();
  private seq = 0;
  private readonly origin: number;
  private capacity: number;
  private busy = 0;
  private readonly waiting: Job[] = [];
  private waitingHead = 0;
  /** Jobs in `waiting` whose caller gave up. */
  private gone = 0;
  private readonly fail: ((sim: Simulation) => unknown) | undefined;
  private readonly abortable: boolean;
  private readonly keepCalls: boolean;
  private readonly probes: Record<string, () => number>;
  // The second being collected.
  private bucket: SecondStats;
  private latencies: number[] = [];
  private waits: number[] = [];
  private area = 0;
  private areaSince: number;

  constructor(options: SimulationOptions) {
    this.simClock = new SimClock();
    this.clock = this.simClock;
    this.origin = this.clock.now();
    this.areaSince = this.origin;
    this.random = seededRandom(options.seed);
    this.capacity = options.workers ?? 1;
    this.serviceMs = options.serviceMs ?? 20;
    this.fail = options.fail;
    this.abortable = options.abortable ?? false;
    this.keepCalls = options.keepCalls ?? true;
    this.probes = options.probes ?? {};
    this.bucket = this.newBucket(0);
    this.schedule(this.origin + 1000, () => this.endSecond(), true);
  }

  /** Simulated ms since the start. */
  get now(): number {
    return this.clock.now() - this.origin;
  }

  /** Workers of the dependency; more start serving its queue at once, fewer stop taking work. */
  get workers(): number {
    return this.capacity;
  }

  set workers(n: number) {
    this.capacity = n;
    this.startWaiting();
  }

  /** Calls at the dependency now: in service and in its queue. */
  get inFlight(): number {
    return this.busy + this.waiting.length - this.waitingHead - this.gone;
  }

  /** Calls in service now. */
  get inService(): number {
    return this.busy;
  }

  /**
   * The dependency as a function for a pipeline: one attempt, which waits in the dependency's
   * queue for a worker and is served for an exponential time. Calls made by the simulator's
   * clients go through it; a test may also call it from a function of its own.
   */
  readonly dependency = (context?: ExecutionContext): Promise<void> =>
    this.attempt(undefined, context);

  /** Runs `fn` at time `at` (ms since the start), between events. */
  at(at: number, fn: () => void): void {
    this.schedule(this.origin + at, fn);
  }

  /** Starts a closed-loop group. */
  closedLoop(options: ClosedLoopOptions): Load {
    const name = options.name ?? 'closed';
    const until = this.origin + (options.until ?? Number.POSITIVE_INFINITY);
    const think = options.think ?? 0;
    const load: Load = {
      rate: Number.NaN,
      stop: () => {
        stopped = true;
      },
    };
    let stopped = false;
    const client = (): void => {
      if (stopped || this.clock.now() >= until) return;
      void this.call(name, options.via, options.options).then((outcome) => {
        const pause =
          outcome === 'refused' && options.refusedPause !== undefined
            ? options.refusedPause
            : typeof think === 'number'
              ? think
              : think(this.random);
        if (pause > 0) this.schedule(this.clock.now() + pause, client);
        else client();
      });
    };
    this.schedule(this.origin + (options.from ?? this.now), () => {
      for (let k = 0; k < options.clients; k++) client();
    });
    return load;
  }

  /** Starts an open-loop group (Poisson arrivals). */
  openLoop(options: OpenLoopOptions): Load {
    const name = options.name ?? 'open';
    const until = this.origin + (options.until ?? Number.POSITIVE_INFINITY);
    let stopped = false;
    const load: Load = {
      rate: options.rate,
      stop: () => {
        stopped = true;
      },
    };
    const next = (): void => {
      if (stopped || load.rate <= 0) return;
      const gap = (-1000 / load.rate) * Math.log(1 - this.random());
      const at = this.clock.now() + gap;
      if (at >= until) return;
      this.schedule(at, arrive);
    };
    const arrive = (): void => {
      if (stopped) return;
      void this.call(name, options.via, options.options);
      next();
    };
    this.schedule(this.origin + (options.from ?? this.now), next);
    return load;
  }

  /**
   * Runs the simulation until `ms` after its start: events in time order, library timers at
   * their due times, and all promise continuations after each, before time moves on.
   */
  async run(ms: number): Promise<void> {
    const end = this.origin + ms;
    const clock = this.simClock;
    // From here on this runs as a promise continuation, which `settled()` relies on: a tick
    // queued then runs only once the microtask queue is empty.
    await null;
    for (;;) {
      const event = this.events.peek();
      const t = Math.min(event?.time ?? Number.POSITIVE_INFINITY, clock.nextDue());
      if (t > end) break;
      // Fires the library's timers due at t (none is due earlier).
      clock.advance(t - clock.now());
      if (event !== undefined && event.time === t) {
        this.events.pop();
        event.run();
      }
      // Every continuation of what just happened runs at this time: Node runs a tick callback
      // only once the microtask queue is empty (the library queues no ticks of its own).
      await settled();
    }
    clock.advance(end - clock.now());
  }

  /** Calls per second the dependency serves at most (workers / mean service time). */
  get capacityPerSecond(): number {
    return (this.capacity * 1000) / this.serviceMs;
  }

  /** Runs `run` at `time`; `first` puts it before the other events of that time (a second's end). */
  private schedule(time: number, run: () => void, first = false): void {
    const seq = this.seq++;
    this.events.push({ time, seq: first ? seq - Number.MAX_SAFE_INTEGER : seq, run });
  }

  private call(
    client: string,
    via: Runner,
    options: (() => ExecuteOptions | undefined) | undefined,
  ): Promise<CallOutcome> {
    const now = this.clock.now();
    const record: CallRecord = {
      client,
      start: now - this.origin,
      admitted: Number.NaN,
      attempts: 0,
      served: Number.NaN,
      service: Number.NaN,
      end: Number.NaN,
      outcome: 'pending',
      reason: undefined,
    };
    if (this.keepCalls) this.calls.push(record);
    const totals = this.totalsOf(client);
    totals.started++;
    return via
      .execute((context) => {
        if (record.attempts++ === 0) {
          totals.admitted++;
          record.admitted = this.now;
          this.bucket.admitted++;
          this.waits.push(record.admitted - record.start);
        }
        return this.attempt(record, context);
      }, options?.())
      .then(
        () => this.ended(record, totals, 'ok', undefined),
        (error: unknown) => {
          // A policy's error after the function ran (a timeout) is a failure, not a refusal.
          if (record.attempts === 0 && isPolicyRejection(error)) {
            const reason = (error as { reason?: unknown }).reason;
            return this.ended(
              record,
              totals,
              'refused',
              typeof reason === 'string' ? reason : error.name,
            );
          }
          const name = error instanceof Error ? error.name : String(error);
          return this.ended(record, totals, 'failed', name);
        },
      );
  }

  private totalsOf(client: string): ClientTotals {
    let totals = this.totals.get(client);
    if (totals === undefined) {
      totals = { started: 0, admitted: 0, ok: 0, refused: 0, failed: 0 };
      this.totals.set(client, totals);
    }
    return totals;
  }

  private ended(
    record: CallRecord,
    totals: ClientTotals,
    outcome: CallOutcome,
    reason: string | undefined,
  ): CallOutcome {
    record.end = this.now;
    record.outcome = outcome;
    record.reason = reason;
    const b = this.bucket;
    if (outcome === 'ok') {
      b.ok++;
      totals.ok++;
    } else if (outcome === 'refused') {
      b.refused++;
      totals.refused++;
    } else {
      b.failed++;
      totals.failed++;
    }
    if (record.attempts > 0) this.latencies.push(record.end - record.start);
    return outcome;
  }

  private attempt(record: CallRecord | undefined, context?: ExecutionContext): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const job: Job = { resolve, reject, record, state: 'queued' };
      if (this.abortable && context !== undefined) {
        const { signal } = context;
        signal.addEventListener(
          'abort',
          () => {
            if (job.state === 'queued') {
              this.noteInFlight();
              job.state = 'gone';
              this.gone++;
            }
            reject(signal.reason);
          },
          { once: true },
        );
      }
      this.noteInFlight();
      if (this.busy < this.capacity) this.serve(job);
      else this.waiting.push(job);
    });
  }

  private serve(job: Job): void {
    job.state = 'serving';
    this.busy++;
    this.served++;
    const service = -this.serviceMs * Math.log(1 - this.random());
    const r = job.record;
    if (r !== undefined && Number.isNaN(r.served)) {
      r.served = this.now;
      r.service = service;
    }
    this.schedule(this.clock.now() + service, () => {
      this.noteInFlight();
      this.busy--;
      const error = this.fail?.(this);
      if (error === undefined) job.resolve();
      else job.reject(error);
      this.startWaiting();
    });
  }

  private startWaiting(): void {
    while (this.busy < this.capacity && this.waitingHead < this.waiting.length) {
      const job = this.waiting[this.waitingHead++]!;
      if (this.waitingHead > 1024 && this.waitingHead * 2 > this.waiting.length) {
        this.waiting.splice(0, this.waitingHead);
        this.waitingHead = 0;
      }
      if (job.state === 'gone') {
        this.gone--;
        continue;
      }
      this.serve(job);
    }
  }

  /** Adds the in-flight area up to now (called before the count changes). */
  private noteInFlight(): void {
    const now = this.clock.now();
    this.area += this.inFlight * (now - this.areaSince);
    this.areaSince = now;
  }

  private newBucket(second: number): SecondStats {
    return {
      second,
      inFlight: 0,
      admitted: 0,
      refused: 0,
      failed: 0,
      ok: 0,
      p50: Number.NaN,
      p99: Number.NaN,
      waitP99: Number.NaN,
      waitMax: Number.NaN,
      probes: {},
    };
  }

  private endSecond(): void {
    this.noteInFlight();
    const b = this.bucket;
    b.inFlight = this.area / 1000;
    this.area = 0;
    b.p50 = percentile(this.latencies, 0.5);
    b.p99 = percentile(this.latencies, 0.99);
    b.waitP99 = percentile(this.waits, 0.99);
    b.waitMax = this.waits.length === 0 ? Number.NaN : this.waits[this.waits.length - 1]!;
    for (const [name, read] of Object.entries(this.probes)) b.probes[name] = read();
    this.series.push(b);
    this.latencies = [];
    this.waits = [];
    this.bucket = this.newBucket(b.second + 1);
    this.schedule(this.clock.now() + 1000, () => this.endSecond(), true);
  }
}
