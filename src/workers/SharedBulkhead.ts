import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { Bulkhead } from '../policies/bulkhead/Bulkhead.js';
import { type BulkheadOptions, resolveBulkheadOptions } from '../policies/bulkhead/options.js';
import { type Outcome, REJECTED } from '../protocol/step.js';
import { integer } from '../validation/validate.js';
import {
  claimSlot,
  heldInProcess,
  MAGIC,
  MAGIC_AT,
  type PermitLayout,
  permitLayout,
  readLayout,
  reclaimSlots,
  writeHeader,
} from './permitSlots.js';
import {
  openOrMake,
  type SharedLocalOptions,
  type SharedPolicyState,
  type StateFormat,
} from './state.js';

/** Options of a {@link SharedBulkhead}: those of `Bulkhead` without a queue, and its slots. */
export interface SharedBulkheadOptions extends BulkheadOptions {
  /**
   * A shared bulkhead has no queue yet: `maxQueue` must be 0 (a refusal is at once).
   * @default 0
   */
  readonly maxQueue?: 0;
  /**
   * Bulkheads that can share the state at once (one per thread, or more), an integer in
   * [1, 4096]. Each owns a slot counting the permits it holds, so that the permits of a thread
   * that exits come back; a slot is 128 bytes.
   * @default 64
   */
  readonly slots?: number;
  /** @internal `'packed'` puts the slots on shared cache lines, to measure the padding. */
  readonly layout?: 'padded' | 'packed';
}

/** The state of a {@link SharedBulkhead}, for other threads: see {@link SharedPolicyState}. */
export type SharedBulkheadState = SharedPolicyState<
  'bulkhead',
  Omit<SharedBulkheadOptions, 'clock' | 'slots' | 'layout'>
>;

/** A worker as {@link SharedBulkhead.watch} needs it: a `Worker` of `node:worker_threads`. */
export interface ExitingThread {
  readonly threadId: number;
  /** Calls `listener` once the thread has exited. */
  once(event: 'exit', listener: () => void): unknown;
}

const FORMAT: StateFormat<'bulkhead'> = {
  kind: 'bulkhead',
  version: 1,
  magic: MAGIC,
  magicAt: MAGIC_AT,
  what: 'SharedBulkhead',
};
const DEFAULT_SLOTS = 64;
const MAX_SLOTS = 4_096;

/**
 * The id this thread's slots are owned under: its `threadId` + 1 on Node (the main thread's is
 * 0, and 0 marks a free slot), read without importing `node:worker_threads`, so the module
 * loads on every runtime; 1 where there is none (no other thread can then reclaim).
 */
function ownerId(): number {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof host?.getBuiltinModule !== 'function') return 1;
  const threads = host.getBuiltinModule('node:worker_threads') as { threadId?: number };
  return (threads?.threadId ?? 0) + 1;
}

/**
 * A bulkhead whose count of calls in flight lives in a `SharedArrayBuffer`: every thread of the
 * process that builds one from the same `state` shares one `maxConcurrent`. It is a
 * {@link Bulkhead} (the same options, error, events and gate of pipelines and decorators)
 * without a queue yet: a call that finds no permit is refused at once.
 *
 * Each bulkhead owns a slot of the shared memory counting the permits its calls hold; the
 * process holds the sum of the slots. Admission adds one to this bulkhead's slot, sums the
 * slots, and takes its one back when the sum went past the limit (an atomic add, a read of
 * each slot claimed so far, a second add only on refusal); a release is one atomic subtraction.
 * Since every permit lives in one word, a thread stopped at any point (a worker can be
 * terminated between any two atomic operations) leaves nothing half done: when a thread
 * exits while its calls hold permits (terminated, or crashed), the thread that made the
 * worker gives them back with {@link reclaim} (or {@link watch}, which calls it when the
 * worker exits). Two admissions racing for the last permit may both be refused (each saw the
 * other's add); two are never both admitted past the limit.
 *
 * Counters (`stats().admitted`, refusals) are this thread's; `inFlight` is the process's.
 * Its options cannot change once the state is made: `reconfigure` throws.
 *
 * @example
 * ```ts
 * // main thread
 * const pool = new SharedBulkhead({ maxConcurrent: 8 });
 * const worker = new Worker(new URL('./worker.js', import.meta.url), {
 *   workerData: { pool: pool.state },
 * });
 * pool.watch(worker); // its permits come back when it exits
 * // worker.js
 * const pool = new SharedBulkhead(workerData.pool);
 * await pipeline(pool).execute(() => db.query(sql));
 * ```
 */
export class SharedBulkhead extends Bulkhead {
  /** What another thread builds its bulkhead from: post it or pass it as `workerData`. */
  readonly state: SharedBulkheadState;
  readonly #words: Int32Array;
  readonly #layout: PermitLayout;
  /** Index of this bulkhead's slot's held count. */
  readonly #held: number;
  readonly #owner: number;
  #disposed = false;

  /**
   * @param options the bulkhead's options (a number is `maxConcurrent`), to make a new shared
   * state; or the `state` of a shared bulkhead made in this process, to share it.
   * @param local this thread's own options, when building from a state.
   * @throws {OptionsError} when an option is invalid, or `options` is a state that is not one.
   * @throws {UsageError} when every slot of the state is owned.
   */
  constructor(
    options?: number | SharedBulkheadOptions | SharedBulkheadState,
    local?: SharedLocalOptions,
  ) {
    const { state, options: resolved } = openOrMake<SharedBulkheadState>(
      options,
      local,
      FORMAT,
      () => {
        const given: SharedBulkheadOptions =
          typeof options === 'number'
            ? { maxConcurrent: options }
            : ((options as SharedBulkheadOptions | undefined) ?? {});
        const { slots: s, layout: l, ...rest } = given;
        const slots = integer(s, 'slots', DEFAULT_SLOTS, 1, MAX_SLOTS);
        if (l !== undefined && l !== 'padded' && l !== 'packed') {
          throw new OptionsError('layout', l, '"padded" or "packed"');
        }
        resolveBulkheadOptions(rest);
        const layout = permitLayout(slots, l !== 'packed');
        const buffer = new SharedArrayBuffer(layout.bytes);
        writeHeader(new Int32Array(buffer), layout);
        return { buffer, options: rest };
      },
    );
    const maxQueue = (state.options as BulkheadOptions).maxQueue;
    if (maxQueue !== undefined && maxQueue !== 0) {
      throw new OptionsError('maxQueue', maxQueue, '0: a shared bulkhead has no queue yet');
    }
    super(resolved);
    const words = new Int32Array(state.buffer);
    const layout = readLayout(words);
    if (layout === undefined) {
      throw new OptionsError('state', state, 'the `state` of a SharedBulkhead, unchanged');
    }
    this.state = state;
    this.#words = words;
    this.#layout = layout;
    this.#owner = ownerId();
    const slot = claimSlot(words, layout, this.#owner);
    if (slot === -1) {
      throw new UsageError(
        `Every one of the ${layout.slots} slots of shared bulkhead "${this.name}" is owned: make its state with more \`slots\`, or dispose of the bulkheads no longer used`,
      );
    }
    this.#held = slot + 1;
  }

  /** Calls in flight now in every thread sharing the state. */
  override get inFlight(): number {
    return heldInProcess(this.#words, this.#layout);
  }

  /** Calls in flight now through this bulkhead (this thread's slot). */
  get heldHere(): number {
    return Atomics.load(this.#words, this.#held);
  }

  /** Gate protocol (`Gate.admit`): called by a pipeline's executor, not by users. */
  override admit(_now: number): number {
    const words = this.#words;
    // Add, then undo past the limit. With sequentially consistent atomics, of the calls that
    // hold permits at once the last to add saw every other add in its sum: none passes the limit.
    Atomics.add(words, this.#held, 1);
    if (heldInProcess(words, this.#layout) <= this.o.maxConcurrent) {
      this.nAdmitted++;
      return 0;
    }
    Atomics.sub(words, this.#held, 1);
    this.emitRejected('full');
    return REJECTED;
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  override release(_token: number, _outcome: Outcome, elapsed: number): void {
    if (elapsed >= 0 && this.latency !== undefined) this.latency.record(elapsed);
    if (Atomics.sub(this.#words, this.#held, 1) === 1 && this.#disposed) this.#freeSlot();
  }

  /**
   * Gives back the permits held by the shared bulkheads of thread `threadId` (a worker's
   * `threadId`) and frees their slots; returns how many permits came back. Call it only once
   * that thread has exited (a live thread would give its permits back a second time): in the
   * thread that made the worker, on its `exit` event, as {@link watch} does.
   *
   * @throws {UsageError} for this thread's own id.
   */
  reclaim(threadId: number): number {
    integer(threadId, 'threadId', 0, 0, Number.MAX_SAFE_INTEGER);
    if (threadId + 1 === this.#owner) {
      throw new UsageError(
        `Shared bulkhead "${this.name}": a thread cannot reclaim its own permits (they come back as its calls end)`,
      );
    }
    return reclaimSlots(this.#words, this.#layout, threadId + 1);
  }

  /**
   * Reclaims the permits of `worker` when it exits, however it ends (returns, throws, is
   * terminated or runs out of memory): call it in the thread that made the worker.
   *
   * @example
   * ```ts
   * const worker = new Worker(url, { workerData: { pool: pool.state } });
   * pool.watch(worker);
   * ```
   */
  watch(worker: ExitingThread): void {
    const id = worker.threadId;
    worker.once('exit', () => {
      this.reclaim(id);
    });
  }

  /**
   * A shared bulkhead's options are the state's: they cannot change.
   * @throws {UsageError} always.
   */
  override reconfigure(_options?: number | SharedBulkheadOptions): void {
    throw new UsageError(
      `Bulkhead "${this.name}" is shared between threads: its options are fixed when its state is made`,
    );
  }

  /** Removes listeners and frees this bulkhead's slot once its calls in flight have ended. */
  override dispose(): void {
    super.dispose();
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.heldHere === 0) this.#freeSlot();
  }

  #freeSlot(): void {
    Atomics.compareExchange(this.#words, this.#held - 1, this.#owner, 0);
  }
}
