import { OptionsError } from '../../errors/OptionsError.js';
import { MAX_DURATION_MS } from '../../validation/validate.js';
import type { CircuitController } from './CircuitController.js';
import { type CircuitState, S_OPEN, STATE_NAMES } from './state.js';
import type { WindowSnapshot } from './windows/HealthWindow.js';

/**
 * A breaker's state as plain JSON-compatible data, from `breaker.toJSON()`, to be passed back
 * as `initialState` (for example to survive a serverless cold start). Times are stored as
 * durations counted back from when the snapshot was taken (the time left in a break, the age of
 * a time window's buckets), never as clock readings, which mean nothing in another process: a
 * snapshot restores the same whatever the new process's clock reads.
 */
export interface CircuitBreakerSnapshot {
  readonly version: 1;
  readonly state: CircuitState;
  /** ms left in the open period (0 unless open). */
  readonly openRemaining: number;
  /** Openings since the breaker last closed, which drive the break backoff. */
  readonly consecutiveOpens: number;
  readonly window: WindowSnapshot;
}

/** @internal The snapshot of the breaker `c` controls, at `now`, after the transitions due by then. */
export function snapshotOf(c: CircuitController, now: number): CircuitBreakerSnapshot {
  c.settleTime(now);
  const s = c.code;
  return {
    version: 1,
    state: STATE_NAMES[s]!,
    openRemaining: s === S_OPEN ? Math.max(0, c.breakEnd - now) : 0,
    consecutiveOpens: c.backoffLevel(now),
    window: c.health.toSnapshot(now),
  };
}

/**
 * @internal Throws {@link OptionsError} unless `snapshot` is one that `toJSON()` of a breaker
 * with a window of `windowKind` could have made. Snapshots are untrusted input (a cache, a
 * file): their shape is checked before a breaker uses them.
 */
export function checkSnapshot(
  snapshot: CircuitBreakerSnapshot,
  windowKind: WindowSnapshot['kind'],
): void {
  if (
    typeof snapshot !== 'object' ||
    snapshot === null ||
    snapshot.version !== 1 ||
    !STATE_NAMES.includes(snapshot.state) ||
    typeof snapshot.openRemaining !== 'number' ||
    !(snapshot.openRemaining >= 0 && snapshot.openRemaining <= MAX_DURATION_MS) ||
    typeof snapshot.window !== 'object' ||
    snapshot.window === null ||
    snapshot.window.kind !== windowKind ||
    !isWindowData(snapshot.window.kind, snapshot.window.data) ||
    !isCount(snapshot.consecutiveOpens)
  ) {
    throw new OptionsError(
      'initialState',
      snapshot,
      `a snapshot from toJSON() of a breaker with a ${windowKind} window`,
    );
  }
}

/**
 * @internal Puts the breaker `c` controls, just built, in the state `snapshot` describes
 * (checked first). Times are counted from now on its clock.
 */
export function restoreSnapshot(c: CircuitController, snapshot: CircuitBreakerSnapshot): void {
  checkSnapshot(snapshot, c.options.windowKind);
  const now = c.options.clock.now();
  c.health.restore(snapshot.window, now);
  const target = STATE_NAMES.indexOf(snapshot.state);
  c.restore(target, snapshot.consecutiveOpens, snapshot.openRemaining, now);
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function isWindowData(kind: unknown, data: unknown): boolean {
  if (!Array.isArray(data)) return false;
  switch (kind) {
    case 'consecutive':
      return data.length <= 2 && data.every(isCount);
    case 'count':
      return data.every((code) => isCount(code) && (code as number) <= 3);
    case 'time':
      return data.every(
        (row) =>
          Array.isArray(row) &&
          row.length === 4 &&
          typeof row[0] === 'number' &&
          row[0] >= 0 &&
          Number.isFinite(row[0]) &&
          row.slice(1).every(isCount) &&
          row[2] <= row[1] &&
          row[3] <= row[1],
      );
    default:
      return false;
  }
}
