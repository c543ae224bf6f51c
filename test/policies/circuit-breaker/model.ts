/**
 * A reference model of the circuit breaker, written from the documented semantics rather than
 * from the implementation: plain arrays instead of rings and buckets, no laziness (time-driven
 * transitions are applied as soon as the clock passes them), no generation tokens in the window.
 * The model-based tests drive the real breaker and this model with the same commands and
 * compare them after every step.
 */
import type { CircuitState, TransitionReason } from '../../../src/index.js';

export type ModelWindow =
  | { readonly kind: 'consecutive'; readonly threshold: number }
  | { readonly kind: 'count'; readonly size: number; readonly minimumCalls: number }
  | {
      readonly kind: 'time';
      readonly duration: number;
      readonly buckets: number;
      readonly minimumCalls: number;
    };

export interface ModelConfig {
  readonly window: ModelWindow;
  readonly failureRateThreshold: number;
  /** undefined: slow-call tracking off. */
  readonly slowCallDuration: number | undefined;
  readonly slowCallRateThreshold: number;
  readonly breakDuration: number;
  readonly breakBackoff: { readonly multiplier: number; readonly maxDuration: number } | undefined;
  readonly probes: number;
  readonly maxConcurrent: number;
  /** Chosen so that probes * successRatio is exact in binary floating point. */
  readonly successRatio: number;
  readonly maxWait: number;
}

export interface ModelTransition {
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly reason: TransitionReason;
  readonly generation: number;
  readonly breakDuration: number;
  /** Window figures when the breaker opened from its window, else undefined. */
  readonly window: { calls: number; failures: number; slowCalls: number } | undefined;
}

/** A call the model admitted. */
export interface ModelCall {
  readonly generation: number;
  readonly startedAt: number;
}

export type ModelOutcome = 'success' | 'failure' | 'ignored';

interface Outcome {
  readonly failure: boolean;
  readonly slow: boolean;
  readonly at: number;
}

/** The window as a list of recorded outcomes since the last reset. */
class WindowModel {
  private outcomes: Outcome[] = [];

  constructor(
    private readonly w: ModelWindow,
    private readonly config: ModelConfig,
  ) {}

  reset(): void {
    this.outcomes = [];
  }

  /** The outcomes the window holds at `now`. */
  private held(now: number): Outcome[] {
    const w = this.w;
    if (w.kind === 'count') return this.outcomes.slice(-w.size);
    if (w.kind === 'time') {
      // A call counts for the bucket (epoch) its time falls in; the window at `now` holds the
      // current epoch and the buckets - 1 before it.
      const width = w.duration / w.buckets;
      const oldestKept = Math.floor(now / width) - w.buckets + 1;
      return this.outcomes.filter((o) => Math.floor(o.at / width) >= oldestKept);
    }
    return this.outcomes;
  }

  counts(now: number): { calls: number; failures: number; slowCalls: number } {
    const w = this.w;
    if (w.kind === 'consecutive') {
      return {
        calls: this.outcomes.length,
        failures: trailingRun(this.outcomes, (o) => o.failure),
        slowCalls: trailingRun(this.outcomes, (o) => o.slow),
      };
    }
    const held = this.held(now);
    return {
      calls: held.length,
      failures: held.filter((o) => o.failure).length,
      slowCalls: held.filter((o) => o.slow).length,
    };
  }

  /** Records one outcome; true when it may make the window cross a threshold. */
  record(failure: boolean, slow: boolean, now: number): boolean {
    const w = this.w;
    const wasFull = w.kind === 'count' && this.held(now).length === w.size;
    this.outcomes.push({ failure, slow, at: now });
    if (failure || slow) return true;
    // A success lowers every rate, except while the window (re)fills up to minimumCalls: the
    // call that reaches minimumCalls makes a rate judgeable.
    if (w.kind === 'count') return !wasFull;
    if (w.kind === 'time') return this.held(now).length <= w.minimumCalls;
    return false;
  }

  judge(now: number): TransitionReason | undefined {
    const w = this.w;
    const trackSlow = this.config.slowCallDuration !== undefined;
    const { calls, failures, slowCalls } = this.counts(now);
    if (w.kind === 'consecutive') {
      if (failures >= w.threshold) return 'consecutive-failures';
      if (trackSlow && slowCalls >= w.threshold) return 'consecutive-slow-calls';
      return undefined;
    }
    if (calls < w.minimumCalls) return undefined;
    if (failures / calls >= this.config.failureRateThreshold) return 'failure-rate';
    if (trackSlow && slowCalls / calls >= this.config.slowCallRateThreshold) {
      return 'slow-call-rate';
    }
    return undefined;
  }
}

function trailingRun<T>(list: readonly T[], test: (item: T) => boolean): number {
  let n = 0;
  for (let i = list.length - 1; i >= 0 && test(list[i]!); i--) n++;
  return n;
}

const TIME_DRIVEN: readonly TransitionReason[] = ['break-elapsed', 'half-open-timeout'];

/** True for transitions the breaker applies lazily, when it is next used or read. */
export function isTimeDriven(reason: TransitionReason): boolean {
  return TIME_DRIVEN.includes(reason);
}

export class BreakerModel {
  state: CircuitState = 'closed';
  generation = 0;
  openUntil = 0;
  halfOpenDeadline = Number.POSITIVE_INFINITY;
  consecutiveOpens = 0;
  /** When probes last closed it: the backoff decays from then. */
  closedAt = 0;
  probesStarted = 0;
  probesInFlight = 0;
  probeSuccesses = 0;
  probeFailures = 0;
  successes = 0;
  failures = 0;
  rejections = 0;
  ignored = 0;
  readonly transitions: ModelTransition[] = [];
  private readonly window: WindowModel;
  /** Isolations whose disposer has not been called (and that no reset() cancelled). */
  private readonly liveIsolations = new Set<number>();
  private nextIsolation = 0;

  constructor(
    readonly config: ModelConfig,
    public now: number,
  ) {
    this.window = new WindowModel(config.window, config);
  }

  /** Outcomes needed to close from half-open: ceil(probes * successRatio). */
  get probesNeeded(): number {
    return Math.ceil(this.config.probes * this.config.successRatio);
  }

  windowCounts(): { calls: number; failures: number; slowCalls: number } {
    return this.window.counts(this.now);
  }

  advance(ms: number): void {
    this.now += ms;
    this.settle();
  }

  /** Applies every time-driven transition due by now, in order. */
  private settle(): void {
    for (;;) {
      if (this.state === 'open' && this.now >= this.openUntil) {
        this.state = 'half-open';
        this.generation++;
        this.probesStarted = 0;
        this.probesInFlight = 0;
        this.probeSuccesses = 0;
        this.probeFailures = 0;
        // The max wait runs from the first probe: until one comes, the breaker waits for it.
        this.halfOpenDeadline = Number.POSITIVE_INFINITY;
        this.emit('open', 'half-open', 'break-elapsed', 0, undefined);
      } else if (this.state === 'half-open' && this.now >= this.halfOpenDeadline) {
        this.open(this.halfOpenDeadline, 'half-open-timeout', false);
      } else {
        return;
      }
    }
  }

  /** A call arrives: the admitted call, or undefined when refused. */
  start(): ModelCall | undefined {
    this.settle();
    const s = this.state;
    if (s === 'closed' || s === 'disabled' || s === 'metrics-only') {
      return { generation: this.generation, startedAt: this.now };
    }
    if (
      s === 'half-open' &&
      this.probesStarted < this.config.probes &&
      this.probesInFlight < this.config.maxConcurrent
    ) {
      if (this.halfOpenDeadline === Number.POSITIVE_INFINITY) {
        this.halfOpenDeadline = this.now + this.config.maxWait;
      }
      this.probesStarted++;
      this.probesInFlight++;
      return { generation: this.generation, startedAt: this.now };
    }
    this.rejections++;
    return undefined;
  }

  finish(call: ModelCall, outcome: ModelOutcome): void {
    this.settle();
    const current = call.generation === this.generation;
    if (outcome === 'ignored') {
      this.ignored++;
      if (current && this.state === 'half-open') {
        this.probesInFlight--;
        this.probesStarted--;
      }
      return;
    }
    const failure = outcome === 'failure';
    const d = this.config.slowCallDuration;
    const slow = d !== undefined && this.now - call.startedAt >= d;
    if (failure) this.failures++;
    else this.successes++;
    if (!current) return;
    if (this.state === 'closed' || this.state === 'metrics-only') {
      if (this.window.record(failure, slow, this.now) && this.state === 'closed') {
        const reason = this.window.judge(this.now);
        if (reason !== undefined) this.open(this.now, reason, true);
      }
    } else if (this.state === 'half-open') {
      this.probesInFlight--;
      if (failure || slow) this.probeFailures++;
      else this.probeSuccesses++;
      const needed = this.probesNeeded;
      if (this.probeSuccesses >= needed) this.close('probes-succeeded');
      else if (this.probeFailures > this.config.probes - needed) {
        this.open(this.now, 'probes-failed', false);
      }
    }
  }

  // ---- manual control -----------------------------------------------------------------------

  isolate(): number {
    this.settle();
    const id = this.nextIsolation++;
    this.liveIsolations.add(id);
    if (this.state !== 'forced-open') this.moveTo('forced-open', 'manual');
    return id;
  }

  /** The disposer of isolation `id`: a no-op when already called or cancelled by reset(). */
  endIsolation(id: number): void {
    this.settle();
    if (!this.liveIsolations.delete(id)) return;
    if (this.liveIsolations.size === 0 && this.state === 'forced-open') this.close('manual');
  }

  forceOpen(): void {
    this.settle();
    if (this.state !== 'forced-open') this.moveTo('forced-open', 'manual');
  }

  reset(): void {
    this.settle();
    this.liveIsolations.clear();
    // A reset starts a new generation even when the breaker was closed already.
    if (this.state === 'closed') this.generation++;
    this.close('manual');
  }

  trip(): void {
    this.settle();
    this.open(this.now, 'manual', false);
  }

  disable(): void {
    this.settle();
    if (this.state !== 'disabled') this.moveTo('disabled', 'manual');
  }

  metricsOnly(): void {
    this.settle();
    if (this.state === 'metrics-only') return;
    this.window.reset();
    this.moveTo('metrics-only', 'manual');
  }

  // ---- transitions ----------------------------------------------------------------------------

  private open(at: number, reason: TransitionReason, fromWindow: boolean): void {
    const c = this.config;
    // Each breakDuration closed since the probes passed takes one step off the backoff.
    if (this.state === 'closed') {
      const steps = Math.floor((at - this.closedAt) / c.breakDuration);
      this.consecutiveOpens = Math.max(0, this.consecutiveOpens - steps);
    }
    const length = c.breakBackoff
      ? Math.min(
          c.breakBackoff.maxDuration,
          c.breakDuration * c.breakBackoff.multiplier ** this.consecutiveOpens,
        )
      : c.breakDuration;
    this.consecutiveOpens++;
    this.openUntil = at + length;
    const from = this.state;
    this.state = 'open';
    this.generation++;
    this.emit(from, 'open', reason, length, fromWindow ? this.window.counts(at) : undefined);
    this.window.reset();
  }

  private close(reason: TransitionReason): void {
    if (reason === 'probes-succeeded' && this.config.breakBackoff) this.closedAt = this.now;
    else this.consecutiveOpens = 0;
    this.window.reset();
    if (this.state !== 'closed') this.moveTo('closed', reason);
  }

  private moveTo(to: CircuitState, reason: TransitionReason): void {
    const from = this.state;
    this.state = to;
    this.generation++;
    this.probesInFlight = 0;
    this.emit(from, to, reason, 0, undefined);
  }

  private emit(
    from: CircuitState,
    to: CircuitState,
    reason: TransitionReason,
    breakDuration: number,
    window: ModelTransition['window'],
  ): void {
    this.transitions.push({ from, to, reason, generation: this.generation, breakDuration, window });
  }
}
