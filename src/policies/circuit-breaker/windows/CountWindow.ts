import type { TransitionReason } from '../events.js';
import {
  type HealthWindow,
  judgeRates,
  type Thresholds,
  type WindowSnapshot,
  WindowTotals,
} from './HealthWindow.js';

const FAILURE = 1;
const SLOW = 2;

/**
 * A ring of successes only, shared by the windows of its size that have recorded nothing
 * else (only a failure or a slow call writes a code other than 0, so it stays all zeros): most
 * breakers never fail, and a typed array of their own is most of the cost of making one.
 * One size is kept, the last asked for.
 */
let zeros = new Uint8Array(0);

function zeroRing(size: number): Uint8Array {
  if (zeros.length !== size) zeros = new Uint8Array(size);
  return zeros;
}

/**
 * @internal The last `size` outcomes in a ring of bytes, with running counters so judging is
 * O(1): the outcome falling out of the ring is subtracted as the new one is added. The ring is
 * a shared one of zeros until the first failure or slow call (see {@link zeroRing}).
 */
export class CountWindow extends WindowTotals implements HealthWindow {
  private nRun = 0;
  private ring: Uint8Array;
  /** False while {@link ring} is the shared ring of zeros. */
  private owned = false;
  private head = 0;

  constructor(
    size: number,
    private t: Thresholds,
  ) {
    super();
    this.ring = zeroRing(size);
  }

  /** New thresholds for the judgements to come; the outcomes held are kept. */
  retune(t: Thresholds): void {
    this.t = t;
  }

  record(failure: boolean, slow: boolean): boolean {
    let ring = this.ring;
    const code = (failure ? FAILURE : 0) | (slow ? SLOW : 0);
    const full = this.nCalls === ring.length;
    if (full) {
      const old = ring[this.head]!;
      if (old & FAILURE) this.nFailures--;
      if (old & SLOW) this.nSlow--;
    } else {
      this.nCalls++;
    }
    if (code !== 0 && !this.owned) ring = this.own();
    ring[this.head] = code;
    if (++this.head === ring.length) this.head = 0;
    if (failure) {
      this.nFailures++;
      this.nRun++;
    } else {
      this.nRun = 0;
    }
    if (slow) this.nSlow++;
    // A success can only lower the rates, except while the window fills: the call that
    // reaches minimumCalls makes a rate judgeable for the first time.
    return failure || slow || !full;
  }

  /** Trades the shared ring of zeros for one of its own, zeros too, before a code other than 0. */
  private own(): Uint8Array {
    const ring = new Uint8Array(this.ring.length);
    this.ring = ring;
    this.owned = true;
    return ring;
  }

  judge(): TransitionReason | undefined {
    return judgeRates(this.nCalls, this.nFailures, this.nSlow, this.nRun, this.t);
  }

  reset(): void {
    this.nCalls = 0;
    this.nFailures = 0;
    this.nSlow = 0;
    this.nRun = 0;
    this.head = 0;
  }

  toSnapshot(): WindowSnapshot {
    const out: number[] = [];
    const size = this.ring.length;
    const start = this.nCalls === size ? this.head : 0;
    for (let i = 0; i < this.nCalls; i++) out.push(this.ring[(start + i) % size]!);
    return { kind: 'count', data: out };
  }

  restoreCalls(calls: number): void {
    // A ring of successes only: zeros, whatever their order.
    this.reset();
    if (this.owned) this.ring.fill(0);
    this.nCalls = Math.min(calls, this.ring.length);
    this.head = this.nCalls % this.ring.length;
  }

  restore(snapshot: WindowSnapshot): void {
    this.reset();
    const data = snapshot.data as readonly number[];
    for (const code of data.slice(-this.ring.length))
      this.record((code & FAILURE) !== 0, (code & SLOW) !== 0);
  }
}
