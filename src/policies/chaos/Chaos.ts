import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { ask, type Disposer, Listeners } from '../../events/Listeners.js';
import { PassiveWatchers, type Replanning } from '../../pipeline/passive.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import { CRITICALITY_LEVELS, DEFAULT_LEVEL } from '../../protocol/criticality.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import {
  ANSWERED,
  type AnsweringGate,
  NEEDS_NOTHING,
  Outcome,
  REJECTED,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import type { ResolvedMetrics } from '../../telemetry/metrics.js';
import { onlyArguments } from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { DelayLine } from './DelayLine.js';
import { chaosChannel } from './diagnostics.js';
import { ChaosFaultError, faultFor, markInjected } from './errors.js';
import type { ChaosInjectionEvent } from './events.js';
import {
  type ChaosCall,
  type ChaosOptions,
  type ChaosStrategy,
  type ResolvedChaosOptions,
  resolveChaosOptions,
} from './options.js';

/** Counters of a chaos step since it was built. */
export interface ChaosStats {
  readonly strategy: ChaosStrategy;
  /** False while it cannot inject (`enabled: false` or `rate: 0`). */
  readonly enabled: boolean;
  readonly rate: number;
  /** Calls that reached it while it was on (a step switched off counts nothing, for speed). */
  readonly calls: number;
  /** Calls it injected into. */
  readonly injected: number;
  /** Calls drawn for injection that went on untouched: `maxActive` injections were active. */
  readonly capped: number;
  /** Injections active now (latencies waiting, behaviours running). */
  readonly active: number;
  /**
   * Calls it let through untouched that then failed: the real failures of the work and policies
   * inside it, never an injection of its own.
   */
  readonly realFailures: number;
}

/**
 * A chaos step (Polly's chaos strategies, Envoy's fault filter): injects a fault, a latency,
 * an outcome or a side action into a share of the calls through it, so a team sees how the
 * policies around it and the application behave when the dependency fails, slows or refuses.
 * It is off until `enabled`; while off, pipelines leave it out, so it costs their calls nothing
 * (switched on by `reconfigure` or a registry reload, it joins them again). Place it innermost,
 * next to the call, so the retries, breakers and timeouts outside react to what it injects
 * as they would to the dependency. What it injects is counted apart from real failures
 * (`breakwater_chaos_injections_total`, `isInjectedFault`).
 *
 * @example
 * ```ts
 * const api = pipeline(
 *   retry({ maxAttempts: 3 }),
 *   chaos({ strategy: 'latency', latency: '300ms', rate: 0.05, enabled: process.env.CHAOS === '1' }),
 * );
 * ```
 */
export class Chaos<T = unknown> extends RunsAlone implements AnsweringGate, WaitingGate {
  /** Type only: the result type an injected outcome stands for. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery = 0;
  /** True for `latency` and `behavior`, whose injections make calls wait. */
  readonly mayWait: boolean;
  readonly name: string;
  readonly clock: Clock;
  readonly strategy: ChaosStrategy;
  /** @internal The metrics settings it was built with. */
  readonly metrics: ResolvedMetrics;
  private o: ResolvedChaosOptions;
  /**
   * True while it cannot inject (`enabled` false or `rate` 0; a function of the call keeps it
   * on). The pipelines that hold it then leave it out of their plan, so a step switched off
   * costs their calls nothing; a call that reaches it anyway (one planned before) passes.
   */
  private off: boolean;
  /** The pipelines that hold it, told when it switches on or off. */
  private readonly watchers = new PassiveWatchers();
  private nCalls = 0;
  private nInjected = 0;
  private nCapped = 0;
  private nFailures = 0;
  private nActive = 0;
  private readonly defaultFault: ChaosFaultError;
  /** The fault of the call just refused, or the outcome of the call just answered. */
  private made: unknown = undefined;
  /** The promise of the behaviour the call just told to wait runs. */
  private running: PromiseLike<unknown> | undefined = undefined;
  /** Stamps of the calls waiting for a behaviour, so a recycled call is never taken for one. */
  private stamps = 0;
  private readonly delays: DelayLine | undefined;
  private readonly ended = (): void => {
    this.nActive--;
  };
  /** @internal */ readonly injections = new Listeners<ChaosInjectionEvent>();

  constructor(options?: ChaosOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new Chaos()');
    const o = resolveChaosOptions(options);
    this.o = o;
    this.off = isOff(o);
    this.name = o.name;
    this.clock = o.clock;
    this.strategy = o.strategy;
    this.metrics = o.metrics;
    this.mayWait = o.strategy === 'latency' || o.strategy === 'behavior';
    this.delays = o.strategy === 'latency' ? new DelayLine(o.clock, this.ended) : undefined;
    this.defaultFault = markInjected(
      stackless(() => new ChaosFaultError(o.name)),
    ) as ChaosFaultError;
    if (options?.name !== undefined) noteCodeBuilt('chaos', o.name, this);
  }

  /** What it needs of a pipeline's executor: a slot for the stamp of a call it delays. */
  needs(): StepNeeds {
    return {
      ...NEEDS_NOTHING,
      callSlot: this.mayWait,
      mayWait: this.mayWait,
      mayAnswer: this.strategy === 'outcome',
    };
  }

  /** `injecting` while it may inject, else `off`. */
  get state(): 'injecting' | 'off' {
    return this.off ? 'off' : 'injecting';
  }

  /** Counters since it was built. */
  stats(): ChaosStats {
    return {
      strategy: this.strategy,
      enabled: !this.off,
      rate: this.o.rate,
      calls: this.nCalls,
      injected: this.nInjected,
      capped: this.nCapped,
      active: this.nActive,
      realFailures: this.nFailures,
    };
  }

  /** Calls `listener` on every injection. */
  onInjection(listener: (event: ChaosInjectionEvent) => void): Disposer {
    return this.injections.add(listener);
  }

  /**
   * Applies new options as a whole, as for the constructor (an option left out takes its
   * default): switch it on or off, change its rate. `name`, `clock` and `strategy` may not
   * change. Calls already delayed keep their delay.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: ChaosOptions<T>): void {
    reconfigureWith(this, resolveChaosOptions, {
      strategy: this.strategy,
      ...options,
    } as ChaosOptions<T>);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedChaosOptions): void {
    checkIdentity('chaos step', this.name, this.clock, o.name, o.clock);
    if (o.strategy !== this.strategy) {
      throw new OptionsError(
        'strategy',
        o.strategy,
        `"${this.strategy}" (a chaos step's strategy cannot change; build a new one)`,
      );
    }
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedChaosOptions): void {
    const was = this.off;
    this.o = o;
    this.off = isOff(o);
    if (this.off !== was) this.watchers.notify();
  }

  /**
   * @internal True while it is off: `pipeline`, which holds it, leaves it out of its plan, and
   * is told to plan again when it switches on or off.
   */
  passive(pipeline: Replanning): boolean {
    this.watchers.add(pipeline);
    return this.off;
  }

  /** Lets the calls it delays go on at once and removes all listeners. Still usable after. */
  dispose(): void {
    this.delays?.releaseAll();
    this.injections.clear();
  }

  /** Gate protocol (`Gate.admit`): called by a pipeline's executor, not by users. */
  admit(_now: number, level = DEFAULT_LEVEL): number {
    if (this.off) return 0;
    return this.draw(level);
  }

  /** A call reached a step that may inject: draws, asks `enabled`, then injects. */
  private draw(level: number): number {
    this.nCalls++;
    const o = this.o;
    if (!(o.random() < o.rate)) return 0;
    const call: ChaosCall = {
      name: this.name,
      strategy: this.strategy,
      criticality: CRITICALITY_LEVELS[level] ?? 'critical',
    };
    if (o.enabled !== true && !ask(o.enabled as (c: ChaosCall) => boolean, call, false)) return 0;
    if (this.nActive >= o.maxActive) {
      this.nCapped++;
      return 0;
    }
    this.nInjected++;
    switch (this.strategy) {
      case 'fault': {
        let error: Error;
        try {
          error = o.error === undefined ? this.defaultFault : faultFor(o.error, call);
        } catch (thrown) {
          error = toError(thrown);
        }
        this.made = markInjected(error);
        this.announce(call, error, undefined);
        return REJECTED;
      }
      case 'outcome':
        try {
          this.made = typeof o.outcome === 'function' ? o.outcome(call) : o.outcome;
        } catch (thrown) {
          // A factory that throws fails the call with its error: a gate answers, never throws.
          this.made = toError(thrown);
          return REJECTED;
        }
        this.announce(call, undefined, undefined);
        return ANSWERED;
      case 'latency':
        this.nActive++;
        this.announce(call, undefined, o.latency);
        return WAIT;
      default:
        return this.behave(call);
    }
  }

  /** Runs the behaviour: the call goes on, waits for its promise, or fails with its error. */
  private behave(call: ChaosCall): number {
    this.nActive++;
    this.announce(call, undefined, undefined);
    let result: unknown;
    try {
      result = this.o.behavior!(call);
    } catch (error) {
      this.nActive--;
      this.made = error;
      return REJECTED;
    }
    if (result === null || typeof (result as PromiseLike<unknown>)?.then !== 'function') {
      this.nActive--;
      return 0;
    }
    this.running = result as PromiseLike<unknown>;
    return WAIT;
  }

  private announce(call: ChaosCall, error: Error | undefined, latency: number | undefined): void {
    if (this.injections.size !== 0) {
      this.injections.emit({
        strategy: this.strategy,
        criticality: call.criticality,
        error,
        latency,
        active: this.nActive,
      });
    }
    if (chaosChannel.hasSubscribers) {
      chaosChannel.publish({ name: this.name, strategy: this.strategy });
    }
  }

  /** Waiting-gate protocol: holds a call it delays, or one waiting for a behaviour. */
  enqueue(exec: WaitingExecution, step: number, now: number): number {
    if (this.delays !== undefined) return this.delays.add(exec, step, now, this.o.latency);
    const running = this.running!;
    this.running = undefined;
    // A call that left (its signal aborted) is not live: the behaviour still counts as active
    // until its promise settles.
    const stamp = (this.stamps = this.stamps >= 0x3fffffff ? 1 : this.stamps + 1);
    Promise.resolve(running).then(
      () => {
        this.nActive--;
        if (exec.queueLive(step, stamp)) exec.queueAdmitted(step, 0);
      },
      (error: unknown) => {
        this.nActive--;
        if (exec.queueLive(step, stamp)) exec.queueRejected(step, toError(error));
      },
    );
    return stamp;
  }

  /** Waiting-gate protocol: a waiting call's signal aborted. */
  leave(): void {
    this.delays?.leave();
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  release(_token: number, outcome: Outcome): void {
    if (outcome === Outcome.Failure) this.nFailures++;
  }

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {}

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(error: unknown): Outcome {
    return isCountedError(error) ? Outcome.Failure : Outcome.Ignored;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(): Outcome {
    return Outcome.Success;
  }

  /** The fault of the call just refused. */
  rejection(): Error {
    return (this.made as Error | undefined) ?? this.defaultFault;
  }

  /** The outcome of the call just answered. */
  answer(): unknown {
    return this.made;
  }
}

brand(Chaos, 'Chaos');

function isOff(o: ResolvedChaosOptions): boolean {
  return o.enabled === false || o.rate === 0;
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A new {@link Chaos} step, off until `enabled`.
 *
 * @example
 * ```ts
 * chaos({ strategy: 'fault', rate: 0.1, enabled: true, error: new Error('ECONNRESET') });
 * ```
 */
export function chaos<T = unknown>(options?: ChaosOptions<T>): Chaos<T> {
  onlyArguments(arguments, 1, 'chaos()');
  return new Chaos(options);
}
