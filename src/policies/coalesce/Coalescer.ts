import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import type { Execution } from '../../pipeline/Execution.js';
import { Flight } from '../../pipeline/Flight.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import type { CoalescingStep } from '../../protocol/around.js';
import { brand } from '../../protocol/brand.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import { NEEDS_NOTHING, NO_TIME, StepKind, type StepNeeds } from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { onlyArguments } from '../../validation/validate.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import type { CoalesceAbandonedEvent } from './events.js';
import {
  type CoalesceOptions,
  type ResolvedCoalesceOptions,
  resolveCoalesceOptions,
} from './options.js';

/** Counters of a coalescing policy since it was built, and its flights now. */
export interface CoalesceStats {
  /** Calls that reached the policy. */
  readonly calls: number;
  /** Runs of the inner work started: one per flight (a call without a key runs alone: one). */
  readonly flights: number;
  /** Calls that joined a flight in progress: `calls - flights` when none left early. */
  readonly coalesced: number;
  /** Flights every caller left before they settled: their work's signal aborted. */
  readonly abandoned: number;
  /** Flights in progress now, kept by key (each key's entry goes when its flight ends). */
  readonly inFlight: number;
}

/**
 * Request coalescing (single flight): calls in flight at once with the same `key`
 * (`execute(fn, { key })`) share one run of the steps inside the policy and of the function of
 * the call that started it; the others' functions are not called. Every caller gets the
 * outcome: the same value object, or what `share` makes of it for each; a failure is shared
 * only with the callers waiting for it, and nothing is kept once the run settles (the next call
 * with the key starts a new run). A call without a key runs alone.
 *
 * A caller whose signal aborts, or whose deadline passes, leaves at once with its own reason,
 * and the others wait on; when the last caller leaves, the run's signal aborts and its key is
 * dropped at once, so a call that comes next starts afresh rather than join a doomed run.
 *
 * Policies outside the coalescer see each caller's call (a breaker outside counts every
 * caller's outcome); policies inside see the one shared run (a bulkhead inside holds one
 * permit, a retry inside retries the shared work).
 *
 * @example
 * ```ts
 * const users = pipeline(coalesce(), retry(), timeout(2_000));
 * const user = await users.execute(({ signal }) => loadUser(id, signal), { key: `user:${id}` });
 * ```
 */
export class Coalescer<T = unknown> extends RunsAlone implements CoalescingStep {
  /** Type only: the result type, read by the pipeline's typing. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Coalesce;
  readonly name: string;
  /** The clock of the pipelines it is in when no other policy gives one. */
  readonly clock: Clock;
  /** @internal Replaced as a whole by `reconfigure`. */ o: ResolvedCoalesceOptions<T>;
  /** The flights in progress, by key: an entry lives exactly as long as its flight. */
  private readonly flights = new Map<string, Flight>();
  /** @internal */ readonly abandonedFlight = new Listeners<CoalesceAbandonedEvent>();
  private nCalls = 0;
  private nFlights = 0;
  private nCoalesced = 0;
  private nAbandoned = 0;

  constructor(options?: CoalesceOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new Coalescer()');
    this.o = resolveCoalesceOptions(options);
    this.name = this.o.name;
    this.clock = this.o.clock;
    if (options?.name !== undefined) noteCodeBuilt('coalesce', this.name, this);
  }

  /**
   * Applies new options to the calls that reach the policy from now on (flights in progress
   * keep their callers). `options` replace the current ones as a whole; `name` and `clock` may
   * be left out (they are kept) but not changed. Throws `OptionsError` and changes nothing when an option is invalid.
   */
  reconfigure(options?: CoalesceOptions<T>): void {
    reconfigureWith(this, resolveCoalesceOptions, options);
  }

  /** @internal Throws `OptionsError` when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedCoalesceOptions<T>): void {
    checkIdentity('coalescing policy', this.name, this.clock, o.name, o.clock);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedCoalesceOptions<T>): void {
    this.o = o;
  }

  /** Counters since the policy was built, and its flights now. */
  stats(): CoalesceStats {
    return {
      calls: this.nCalls,
      flights: this.nFlights,
      coalesced: this.nCoalesced,
      abandoned: this.nAbandoned,
      inFlight: this.flights.size,
    };
  }

  /** Calls `listener` when every caller of a flight left before it settled. */
  onAbandoned(listener: (event: CoalesceAbandonedEvent) => void): Disposer {
    return this.abandonedFlight.add(listener);
  }

  /**
   * Removes all listeners. Flights in progress run on to their end (they are calls in flight);
   * the policy stays usable.
   */
  dispose(): void {
    this.abandonedFlight.clear();
  }

  /** @internal What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    // Callers wait on a flight, and leave it before it ends.
    return { ...NEEDS_NOTHING, mayWait: true, settlesEarly: true };
  }

  /** @internal The executor's call at this step: joins the flight of the call's key, or starts one. */
  join(exec: object, step: number, now: number): unknown {
    const e = exec as Execution;
    this.nCalls++;
    const key = this.o.enabled ? e.detour?.key : undefined;
    if (key !== undefined && typeof key !== 'string') {
      // A misuse: the call fails before anything runs (the executor does not check keys).
      return e.unwind(step - 1, false, new OptionsError('key', key, 'a string'), NO_TIME);
    }
    if (key !== undefined) {
      const current = this.flights.get(key);
      if (current !== undefined) {
        this.nCoalesced++;
        return current.join(e, step, now);
      }
    }
    const flight = new Flight(this, key);
    if (key !== undefined) this.flights.set(key, flight);
    this.nFlights++;
    return flight.start(e, step, now);
  }

  /** @internal */
  flightOver(flight: Flight, abandoned: boolean, reason?: unknown): void {
    const key = flight.key;
    if (key !== undefined && this.flights.get(key) === flight) this.flights.delete(key);
    if (!abandoned) return;
    this.nAbandoned++;
    if (this.abandonedFlight.size !== 0) this.abandonedFlight.emit({ key, reason });
  }

  /** @internal */
  shareValue(value: unknown): unknown {
    const share = this.o.share;
    return share === undefined ? value : share(value as T);
  }
}

brand(Coalescer, 'Coalescer');
