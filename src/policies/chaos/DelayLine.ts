import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { NO_TIME, type WaitingExecution } from '../../protocol/step.js';

interface Delayed {
  readonly exec: WaitingExecution;
  readonly step: number;
  readonly stamp: number;
  readonly until: number;
}

/** Stamps wrap before they leave the small integers V8 keeps unboxed. */
const MAX_STAMP = 0x3fffffff;

/**
 * @internal The calls an injected latency holds, in order of arrival. Every call waits the same
 * time, so their ends come in that order and one timer, armed for the oldest, serves them all.
 * A call whose signal aborts leaves at once (the executor ends its wait); when the last one
 * left the timer is cleared, so none outlives the calls it delays.
 */
export class DelayLine {
  private entries: Delayed[] = [];
  private head = 0;
  private live = 0;
  private stamps = 0;
  private timer: TimerHandle | undefined = undefined;
  private readonly fire = (): void => this.expire();

  constructor(
    private readonly clock: Clock,
    /** Called as each delay ends, by the timer or by its call leaving. */
    private readonly ended: () => void,
  ) {}

  /** Calls held now. */
  get length(): number {
    return this.live;
  }

  /** Holds `exec` (waiting at `step`) for `ms`; returns its stamp. */
  add(exec: WaitingExecution, step: number, now: number, ms: number): number {
    const stamp = (this.stamps = this.stamps >= MAX_STAMP ? 1 : this.stamps + 1);
    const t = now === NO_TIME ? this.clock.now() : now;
    this.entries.push({ exec, step, stamp, until: t + ms });
    this.live++;
    if (this.timer === undefined) this.timer = this.clock.setTimer(this.fire, ms, true);
    return stamp;
  }

  /** A held call left (its signal aborted). */
  leave(): void {
    this.live--;
    this.ended();
    this.settled();
  }

  /** Lets every held call go on now (the step was disposed, or switched off). */
  releaseAll(): void {
    for (let w = this.takeLive(); w !== undefined; w = this.takeLive()) {
      this.ended();
      w.exec.queueAdmitted(w.step, 0);
    }
    this.settled();
  }

  private takeLive(): Delayed | undefined {
    while (this.head < this.entries.length) {
      const w = this.entries[this.head++]!;
      if (w.exec.queueLive(w.step, w.stamp)) {
        this.live--;
        return w;
      }
    }
    return undefined;
  }

  private settled(): void {
    if (this.live === 0) {
      this.entries = [];
      this.head = 0;
      if (this.timer !== undefined) {
        this.clock.clearTimer(this.timer);
        this.timer = undefined;
      }
    } else if (this.entries.length - this.head > 2 * this.live + 16) {
      // Calls that left stay in the array until they reach the head: drop them in bulk.
      this.entries = this.entries.slice(this.head).filter((w) => w.exec.queueLive(w.step, w.stamp));
      this.head = 0;
    }
  }

  private expire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    const entries = this.entries;
    while (this.head < entries.length) {
      const w = entries[this.head]!;
      if (!w.exec.queueLive(w.step, w.stamp)) {
        this.head++;
        continue;
      }
      if (w.until > now) break;
      this.head++;
      this.live--;
      this.ended();
      w.exec.queueAdmitted(w.step, 0);
    }
    this.settled();
    const next = this.entries[this.head];
    if (this.live > 0 && this.timer === undefined && next !== undefined) {
      this.timer = this.clock.setTimer(this.fire, Math.max(0, next.until - now), true);
    }
  }
}
