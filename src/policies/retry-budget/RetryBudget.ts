import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { brand } from '../../protocol/brand.js';
import type { AttemptBudget } from '../../protocol/budget.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { onlyArguments } from '../../validation/validate.js';
import { checkIdentity, withIdentity } from '../shared/reconfigure.js';
import type { BudgetExhaustedEvent } from './events.js';
import {
  type ResolvedRetryBudgetOptions,
  type RetryBudgetModel,
  type RetryBudgetOptions,
  resolveRetryBudgetOptions,
} from './options.js';

/** Counters and state of a retry budget. */
export interface RetryBudgetStats {
  readonly model: RetryBudgetModel;
  /**
   * `window`: extra attempts it would grant now (the share left in the window plus the
   * reserve); `tokens`: the tokens left (extra attempts are granted above half of
   * `maxTokens`); `concurrency`: extra attempts that may start now.
   */
  readonly balance: number;
  /** Calls started under the policies spending from it, since it was built. */
  readonly calls: number;
  /** Of those, calls in progress. */
  readonly active: number;
  /** Extra attempts (retries, hedges) granted and not ended yet (retry delays included). */
  readonly inFlight: number;
  /** Extra attempts granted since it was built. */
  readonly allowed: number;
  /** Extra attempts refused since it was built: each ended a retry with `budget-exhausted`. */
  readonly refused: number;
}

const WINDOW = 0;
const TOKENS = 1;
/** The models by code: window 0, tokens 1, concurrency 2 (the `default` of each switch). */
const MODELS: readonly RetryBudgetModel[] = ['window', 'tokens', 'concurrency'];
/** The window's buckets: it slides by a tenth of its length. */
const BUCKETS = 10;
/** Room for rounding in `ratio × count` (0.2 × 15 is 3.0000000000000004). */
const EPSILON = 1e-9;

/**
 * Caps the extra attempts (retries and hedges) of every policy that holds it: one budget
 * shared by all the pipelines that call one dependency keeps a failing dependency from
 * receiving several times its normal traffic (a retry storm). An extra attempt it refuses ends
 * the call with the give-up reason `budget-exhausted`. See {@link RetryBudgetModel} for how
 * each model decides; the default is Finagle's: retries at most 20 % of the calls of the last
 * 10 s, plus 10 retries per second whatever the traffic.
 *
 * The policies make the calls of {@link AttemptBudget}; each is a few field updates (a call
 * that starts or succeeds reads no clock: the window model counts started calls into their
 * bucket from one timer at each bucket's end, armed only while calls come and never keeping
 * the process alive), so a budget adds a few nanoseconds to a call and no allocation.
 *
 * @example
 * ```ts
 * const budget = retryBudget(); // shared by every pipeline calling the payments service
 * const a = pipeline(retry({ maxAttempts: 4, budget }), timeout('2s'));
 * const b = pipeline(retry({ maxAttempts: 2, budget }));
 * ```
 */
export class RetryBudget implements AttemptBudget {
  readonly name: string;
  /** The clock the window and the reserve are measured on. */
  readonly clock: Clock;
  readonly model: RetryBudgetModel;
  /** @internal */ readonly exhausted = new Listeners<BudgetExhaustedEvent>();
  private o: ResolvedRetryBudgetOptions;
  private readonly code: number;
  private nCalls = 0;
  private nActive = 0;
  private nInFlight = 0;
  private nAllowed = 0;
  private nRefused = 0;
  /** The last request was refused: the next refusal is not a new exhaustion. */
  private refusing = false;
  // window: per bucket, calls started and extra attempts charged to the share.
  private readonly bucketMs: number;
  private readonly started: Float64Array;
  private readonly spent: Float64Array;
  private epoch: number;
  /** The bucket of `epoch`: `epoch % BUCKETS`. */
  private cur: number;
  private bucketEnd: number;
  private totalStarted = 0;
  private totalSpent = 0;
  /** `nCalls` when the calls started were last counted into a bucket. */
  private counted = 0;
  /**
   * Window: true while no tick is armed. A started call only counts itself (no clock read);
   * the tick at each bucket's end, or the next `trySpend`, puts the calls into their bucket.
   */
  private idle: boolean;
  private tickTimer: TimerHandle | undefined = undefined;
  /** The reserve, in thousandths of an attempt per second (ms × attempts per second). */
  private reserve = 0;
  private reserveAt: number;
  // tokens: thousandths of a token, integers, as gRPC keeps them.
  private milli = 0;
  private maxMilli = 0;
  private earnMilli = 0;

  constructor(options?: RetryBudgetOptions) {
    onlyArguments(arguments, 1, 'new RetryBudget()');
    const o = resolveRetryBudgetOptions(options);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.model = o.model;
    this.code = MODELS.indexOf(o.model);
    const window = this.code === WINDOW;
    this.idle = window;
    this.bucketMs = o.window / BUCKETS;
    this.started = new Float64Array(window ? BUCKETS : 0);
    this.spent = new Float64Array(window ? BUCKETS : 0);
    const now = window ? o.clock.now() : 0;
    this.epoch = Math.floor(now / this.bucketMs);
    this.cur = this.epoch % BUCKETS;
    this.bucketEnd = (this.epoch + 1) * this.bucketMs;
    this.reserve = this.reserveCap();
    this.reserveAt = now;
    this.maxMilli = Math.round(o.maxTokens * 1000);
    this.earnMilli = Math.round(o.tokenRatio * 1000);
    this.milli = this.maxMilli;
    if (options?.name !== undefined) noteCodeBuilt('retryBudget', this.name, this);
  }

  // ---- AttemptBudget -----------------------------------------------------------------------

  /** Budget protocol ({@link AttemptBudget.callStarted}): called by the policies that spend. */
  callStarted(): void {
    this.nCalls++;
    this.nActive++;
    if (this.idle) this.wake();
  }

  /** Budget protocol ({@link AttemptBudget.callEnded}): called by the policies that spend. */
  callEnded(): void {
    this.nActive--;
  }

  /** Budget protocol ({@link AttemptBudget.attemptSucceeded}): called by the policies that spend. */
  attemptSucceeded(): void {
    if (this.code === TOKENS) {
      const next = this.milli + this.earnMilli;
      this.milli = Math.min(next, this.maxMilli);
    }
  }

  /** Budget protocol ({@link AttemptBudget.attemptFailed}): called by the policies that spend. */
  attemptFailed(): void {
    if (this.code === TOKENS) this.milli = this.milli > 1000 ? this.milli - 1000 : 0;
  }

  /** Budget protocol ({@link AttemptBudget.trySpend}): called by the policies that spend. */
  trySpend(): boolean {
    let granted: boolean;
    switch (this.code) {
      case WINDOW:
        granted = this.spendWindow();
        break;
      case TOKENS:
        // gRPC: the failure already cost a token; retries go on only above half.
        granted = this.milli * 2 > this.maxMilli;
        break;
      default:
        granted = this.nInFlight < this.concurrencyLimit() - EPSILON;
    }
    if (granted) {
      this.nAllowed++;
      this.nInFlight++;
      this.refusing = false;
      return true;
    }
    this.nRefused++;
    if (!this.refusing) {
      this.refusing = true;
      if (this.exhausted.size !== 0) {
        this.exhausted.emit({ model: this.model, balance: this.balance() });
      }
    }
    return false;
  }

  /** Budget protocol ({@link AttemptBudget.extraEnded}): called by the policies that spend. */
  extraEnded(): void {
    this.nInFlight--;
  }

  // ---- public --------------------------------------------------------------------------------

  /** Counters since it was built, and its state now. */
  stats(): RetryBudgetStats {
    return {
      model: this.model,
      balance: this.balance(),
      calls: this.nCalls,
      active: this.nActive,
      inFlight: this.nInFlight,
      allowed: this.nAllowed,
      refused: this.nRefused,
    };
  }

  /**
   * Calls `listener` when the budget refuses an extra attempt after granting the one before:
   * once per run of refusals (each refused retry still ends with `budget-exhausted`).
   */
  onExhausted(listener: (event: BudgetExhaustedEvent) => void): Disposer {
    return this.exhausted.add(listener);
  }

  /**
   * Applies new options from now on, keeping what was counted. `options` replace the current
   * ones as a whole (an option left out takes its default); `name` and `clock` may be left out
   * but not changed, and neither may `model` nor `window`. Tokens above a lower `maxTokens`
   * are dropped. Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: RetryBudgetOptions): void {
    const next = withIdentity(options, this.name, this.clock);
    const o = resolveRetryBudgetOptions(
      next !== null && typeof next === 'object' && next.model === undefined
        ? { ...next, model: this.model }
        : next,
    );
    this.checkOptions(o);
    this.applyOptions(o);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedRetryBudgetOptions): void {
    checkIdentity('retry budget', this.name, this.clock, o.name, o.clock);
    if (o.model !== this.model) {
      throw new OptionsError(
        'model',
        o.model,
        `"${this.model}" (a retry budget's model cannot change; build a new one)`,
      );
    }
    if (o.window !== this.o.window) {
      throw new OptionsError(
        'window',
        o.window,
        `${this.o.window} (a retry budget's window cannot change; build a new one)`,
      );
    }
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedRetryBudgetOptions): void {
    if (this.code === WINDOW) this.refill(this.clock.now());
    this.o = o;
    this.reserve = Math.min(this.reserve, this.reserveCap());
    this.maxMilli = Math.round(o.maxTokens * 1000);
    this.earnMilli = Math.round(o.tokenRatio * 1000);
    this.milli = Math.min(this.milli, this.maxMilli);
  }

  /** Removes every listener and stops its timer. The budget stays usable. */
  dispose(): void {
    this.exhausted.clear();
    if (this.tickTimer !== undefined) {
      this.clock.clearTimer(this.tickTimer);
      this.tickTimer = undefined;
      // Idle means every call is counted (see `wake`).
      this.update(this.clock.now());
      this.idle = true;
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Window: a call starts after a bucket without any (every earlier call is counted): the
   * window moves to now, and the tick at the end of this bucket will count this call and the
   * next ones.
   */
  private wake(): void {
    this.idle = false;
    const now = this.clock.now();
    if (now >= this.bucketEnd) this.slide(now);
    this.arm();
  }

  private arm(): void {
    this.tickTimer = this.clock.setTimer(
      this.tick,
      Math.max(0, this.bucketEnd - this.clock.now()),
      false,
    );
  }

  /** At a bucket's end: counts the calls started in it, and goes on ticking while calls come. */
  private readonly tick = (): void => {
    this.tickTimer = undefined;
    const busy = this.nCalls !== this.counted;
    this.update(this.clock.now());
    if (busy) this.arm();
    else this.idle = true;
  };

  /**
   * Counts the calls started since the last count into the bucket of that count (the one they
   * started in, or an earlier one when the tick could not run in time: then they leave the
   * window sooner, which errs towards fewer retries), then moves the window to `now`.
   */
  private update(now: number): void {
    const calls = this.nCalls - this.counted;
    if (calls !== 0) {
      this.counted = this.nCalls;
      this.started[this.cur] = this.started[this.cur]! + calls;
      this.totalStarted += calls;
    }
    if (now >= this.bucketEnd) this.slide(now);
  }

  private spendWindow(): boolean {
    const now = this.clock.now();
    this.update(now);
    if (this.totalSpent + 1 <= this.o.ratio * this.totalStarted + EPSILON) {
      this.spent[this.cur]!++;
      this.totalSpent++;
      return true;
    }
    this.refill(now);
    if (this.reserve >= 1000) {
      this.reserve -= 1000;
      return true;
    }
    return false;
  }

  /** Moves the window to the bucket of `now`, dropping the buckets that left it. */
  private slide(now: number): void {
    const epoch = Math.floor(now / this.bucketMs);
    if (epoch - this.epoch >= BUCKETS) {
      this.started.fill(0);
      this.spent.fill(0);
      this.totalStarted = 0;
      this.totalSpent = 0;
    } else {
      for (let e = this.epoch + 1; e <= epoch; e++) {
        const i = e % BUCKETS;
        this.totalStarted -= this.started[i]!;
        this.totalSpent -= this.spent[i]!;
        this.started[i] = 0;
        this.spent[i] = 0;
      }
    }
    this.epoch = epoch;
    this.cur = epoch % BUCKETS;
    this.bucketEnd = (epoch + 1) * this.bucketMs;
  }

  /** The reserve holds at most one second's worth, and at least one attempt. */
  private reserveCap(): number {
    const perSecond = this.o.minRetriesPerSecond;
    return perSecond === 0 ? 0 : Math.max(1, perSecond) * 1000;
  }

  private refill(now: number): void {
    const elapsed = now - this.reserveAt;
    this.reserveAt = now;
    if (elapsed > 0) {
      this.reserve = Math.min(
        this.reserveCap(),
        this.reserve + elapsed * this.o.minRetriesPerSecond,
      );
    }
  }

  private concurrencyLimit(): number {
    const share = this.o.ratio * this.nActive;
    const min = this.o.minRetryConcurrency;
    return Math.max(share, min);
  }

  private balance(): number {
    switch (this.code) {
      case WINDOW: {
        const now = this.clock.now();
        this.update(now);
        this.refill(now);
        const share = Math.max(
          0,
          Math.floor(this.o.ratio * this.totalStarted + EPSILON) - this.totalSpent,
        );
        return share + Math.floor(this.reserve / 1000);
      }
      case TOKENS:
        return this.milli / 1000;
      default:
        return Math.max(0, Math.ceil(this.concurrencyLimit() - EPSILON) - this.nInFlight);
    }
  }
}

brand(RetryBudget, 'RetryBudget');
