import { UsageError } from '../errors/OptionsError.js';
import { gcraTake, gcraWait } from '../policies/rate-limiter/gcra.js';
import {
  type RateLimiterOptions,
  resolveRateLimiterOptions,
} from '../policies/rate-limiter/options.js';
import { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import { NO_TIME } from '../protocol/step.js';
import {
  openOrMake,
  type SharedLocalOptions,
  type SharedPolicyState,
  type StateFormat,
} from './state.js';

/** Options of a {@link SharedRateLimiter}: those of `RateLimiter`. */
export type SharedRateLimiterOptions = RateLimiterOptions;

/** The state of a {@link SharedRateLimiter}, for other threads: see {@link SharedPolicyState}. */
export type SharedRateLimiterState = SharedPolicyState<
  'rateLimiter',
  Omit<RateLimiterOptions, 'clock'>
>;

const FORMAT: StateFormat<'rateLimiter'> = {
  kind: 'rateLimiter',
  version: 1,
  magic: 0x62_77_72_6c, // "bwrl"
  // On the TAT's line, but never written after the state is made.
  magicAt: 8,
  what: 'SharedRateLimiter',
};
/** The TAT is BigInt64 word 0; the buffer is one 128-byte line (two on some CPUs' prefetch). */
const BYTES = 128;
/** A TAT no reading of the clock comes near: the limiter is idle (2^62 µs before the origin). */
const NEVER = -(2n ** 62n);

/**
 * A GCRA rate limiter whose one word of state, the theoretical arrival time, lives in a
 * `SharedArrayBuffer`: every thread of the process that builds one from the same `state`
 * admits against one limit. It is a {@link RateLimiter} (the same options, errors, events,
 * `tryAcquire`, `decide`, `acquire`, and a gate of pipelines and decorators); only where the
 * state lives differs.
 *
 * An admission is one compare-and-swap of the TAT (retried when another thread moved it in
 * between); a refusal reads it and writes nothing, so a limiter under overload does not make
 * threads fight over it. Time is read on every call (a cached reading, safe within one thread,
 * would let a thread that slept, as a pooled worker does between tasks, admit against an old
 * time). A 64-bit atomic word is read and written as a BigInt: a call allocates a few
 * short-lived ones (about 100 bytes, collected young), where `RateLimiter` allocates nothing.
 * Counters (`stats()`) are this thread's; the limit is the process's.
 *
 * Its options cannot change once the state is made: `reconfigure` throws.
 *
 * @example
 * ```ts
 * // main thread
 * const limiter = new SharedRateLimiter({ limit: 1_000, period: 1_000 });
 * new Worker(new URL('./worker.js', import.meta.url), { workerData: { limiter: limiter.state } });
 * // worker.js
 * const limiter = new SharedRateLimiter(workerData.limiter);
 * await pipeline(limiter).execute(() => fetch(url));
 * ```
 */
export class SharedRateLimiter extends RateLimiter {
  /** What another thread builds its limiter from: post it or pass it as `workerData`. */
  readonly state: SharedRateLimiterState;
  readonly #tat: BigInt64Array;

  /**
   * @param options the limiter's options, to make a new shared state; or the `state` of a
   * shared limiter made in this process, to share it.
   * @param local this thread's own options, when building from a state.
   * @throws {OptionsError} when an option is invalid, or `options` is a state that is not one.
   */
  constructor(
    options: SharedRateLimiterOptions | SharedRateLimiterState,
    local?: SharedLocalOptions,
  ) {
    const { state, options: resolved } = openOrMake<SharedRateLimiterState>(
      options,
      local,
      FORMAT,
      () => {
        const given = (options as SharedRateLimiterOptions | undefined) ?? {};
        resolveRateLimiterOptions(given);
        const buffer = new SharedArrayBuffer(BYTES);
        new BigInt64Array(buffer)[0] = NEVER;
        return { buffer, options: given };
      },
    );
    super(resolved);
    this.state = state;
    this.#tat = new BigInt64Array(state.buffer, 0, 1);
  }

  /** A shared limiter's options are the state's: they cannot change. */
  override reconfigure(_options: SharedRateLimiterOptions): void {
    throw new UsageError(
      `Rate limiter "${this.name}" is shared between threads: its options are fixed when its state is made`,
    );
  }

  /** @internal A fresh reading: a cached one is only safe within one thread (see the class). */
  protected override nowUs(now: number): number {
    return Math.round((now !== NO_TIME ? now : this.clock.now()) * 1_000);
  }

  /** @internal */
  protected override take(nowUs: number, permits: number): number {
    const { intervalUs, burst } = this.o;
    const cell = this.#tat;
    for (;;) {
      const seen = Atomics.load(cell, 0);
      const tat = Number(seen);
      const wait = gcraWait(tat, nowUs, permits, intervalUs, burst);
      // A refusal writes nothing.
      if (wait > 0) return wait;
      const next = BigInt(gcraTake(tat, nowUs, permits, intervalUs));
      if (Atomics.compareExchange(cell, 0, seen, next) === seen) {
        this.nAdmitted++;
        return 0;
      }
    }
  }

  /** @internal */
  protected override reserve(nowUs: number, permits: number): number {
    const cell = this.#tat;
    for (;;) {
      const seen = Atomics.load(cell, 0);
      const next = gcraTake(Number(seen), nowUs, permits, this.o.intervalUs);
      if (Atomics.compareExchange(cell, 0, seen, BigInt(next)) === seen) {
        this.nAdmitted++;
        return next;
      }
    }
  }

  /** @internal */
  protected override untake(reservedTat: number, permits: number): boolean {
    const seen = BigInt(reservedTat);
    const back = BigInt(reservedTat - permits * this.o.intervalUs);
    return Atomics.compareExchange(this.#tat, 0, seen, back) === seen;
  }

  /** @internal */
  protected override tatUs(): number {
    return Number(Atomics.load(this.#tat, 0));
  }
}
