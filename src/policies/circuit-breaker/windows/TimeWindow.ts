import type { TransitionReason } from '../events.js';
import {
  type HealthWindow,
  judgeRates,
  type Thresholds,
  type WindowSnapshot,
  WindowTotals,
} from './HealthWindow.js';

/** Tag of a slice that counts nothing. */
const EMPTY = Number.NEGATIVE_INFINITY;

/**
 * @internal Outcomes of the last `duration` ms in `buckets` slices. Each slice is tagged with
 * the epoch (time / slice width) it counts; a slice whose tag is stale is cleared when next
 * touched, so an idle window needs no timer. Totals are running sums corrected for expired
 * slices when judged.
 *
 * Epochs of restored slices may be negative: a snapshot from a process whose clock read days
 * restored in one whose clock reads a few ms puts the older calls before the new clock's zero.
 */
export class TimeWindow extends WindowTotals implements HealthWindow {
  /** Failures in a row; not in snapshots: a restored window starts with no run. */
  private nRun = 0;
  private readonly width: number;
  private readonly epochs: Float64Array;
  private readonly bCalls: Uint32Array;
  private readonly bFailures: Uint32Array;
  private readonly bSlow: Uint32Array;
  private lastEpoch = -1;

  constructor(
    duration: number,
    private readonly buckets: number,
    private t: Thresholds,
  ) {
    super();
    this.width = duration / buckets;
    this.epochs = new Float64Array(buckets).fill(EMPTY);
    this.bCalls = new Uint32Array(buckets);
    this.bFailures = new Uint32Array(buckets);
    this.bSlow = new Uint32Array(buckets);
  }

  /** New thresholds for the judgements to come; the outcomes held are kept. */
  retune(t: Thresholds): void {
    this.t = t;
  }

  /** Only an empty time window is ever restored from a count (outcomes need their times). */
  restoreCalls(): void {
    this.reset();
  }

  record(failure: boolean, slow: boolean, now: number): boolean {
    const epoch = Math.floor(now / this.width);
    // Once per slice, drop the expired ones, so the totals deciding whether to judge are live.
    if (epoch !== this.lastEpoch) {
      this.expire(now);
      this.lastEpoch = epoch;
    }
    const i = epoch % this.buckets;
    if (this.epochs[i] !== epoch) this.clear(i, epoch);
    this.bCalls[i]!++;
    this.nCalls++;
    if (failure) {
      this.bFailures[i]!++;
      this.nFailures++;
      this.nRun++;
    } else {
      this.nRun = 0;
    }
    if (slow) {
      this.bSlow[i]!++;
      this.nSlow++;
    }
    return failure || slow || this.nCalls <= this.t.minimumCalls;
  }

  judge(now: number): TransitionReason | undefined {
    this.expire(now);
    return judgeRates(this.nCalls, this.nFailures, this.nSlow, this.nRun, this.t);
  }

  reset(): void {
    this.epochs.fill(EMPTY);
    this.bCalls.fill(0);
    this.bFailures.fill(0);
    this.bSlow.fill(0);
    this.nCalls = 0;
    this.nFailures = 0;
    this.nSlow = 0;
    this.nRun = 0;
  }

  toSnapshot(now: number): WindowSnapshot {
    this.expire(now);
    const current = Math.floor(now / this.width);
    const rows: number[][] = [];
    for (let age = this.buckets - 1; age >= 0; age--) {
      const epoch = current - age;
      const i = slot(epoch, this.buckets);
      if (this.epochs[i] === epoch && this.bCalls[i]! > 0) {
        rows.push([age * this.width, this.bCalls[i]!, this.bFailures[i]!, this.bSlow[i]!]);
      }
    }
    return { kind: 'time', data: rows };
  }

  restore(snapshot: WindowSnapshot, now: number): void {
    this.reset();
    const current = Math.floor(now / this.width);
    for (const row of snapshot.data as readonly (readonly number[])[]) {
      const [ageMs = 0, calls = 0, failures = 0, slow = 0] = row;
      const epoch = current - Math.round(ageMs / this.width);
      if (epoch <= current - this.buckets) continue;
      const i = slot(epoch, this.buckets);
      if (this.epochs[i] !== epoch) this.clear(i, epoch);
      this.bCalls[i]! += calls;
      this.bFailures[i]! += failures;
      this.bSlow[i]! += slow;
      this.nCalls += calls;
      this.nFailures += failures;
      this.nSlow += slow;
    }
  }

  /** Drops slices older than the window from the totals. */
  private expire(now: number): void {
    const oldest = Math.floor(now / this.width) - this.buckets;
    for (let i = 0; i < this.buckets; i++) {
      const e = this.epochs[i]!;
      if (e > EMPTY && e <= oldest) this.clear(i, EMPTY);
    }
  }

  private clear(i: number, epoch: number): void {
    this.nCalls -= this.bCalls[i]!;
    this.nFailures -= this.bFailures[i]!;
    this.nSlow -= this.bSlow[i]!;
    this.bCalls[i] = 0;
    this.bFailures[i] = 0;
    this.bSlow[i] = 0;
    this.epochs[i] = epoch;
  }
}

/** The slice of `epoch`, negative epochs included (`record` sees only epochs from 0 on). */
function slot(epoch: number, buckets: number): number {
  return ((epoch % buckets) + buckets) % buckets;
}
