/** Opaque handle returned by {@link Clock.setTimer}. */
export type TimerHandle = unknown;

/**
 * The source of time for every policy: a monotonic reading in milliseconds and a way to
 * schedule callbacks. Policies never call `performance.now()` or `setTimeout` directly, so a
 * `ManualClock` from `breakwater/testing` can drive them without real sleeps.
 */
export interface Clock {
  /** Monotonic milliseconds; only differences between readings are meaningful. */
  now(): number;
  /**
   * Calls `callback` once, `ms` milliseconds from now. A timer made with `keepAlive: false`
   * does not keep a Node.js process running (it is `unref`'d where the platform allows).
   */
  setTimer(callback: () => void, ms: number, keepAlive?: boolean): TimerHandle;
  /** Cancels a timer made by {@link Clock.setTimer}; unknown or fired handles are ignored. */
  clearTimer(handle: TimerHandle): void;
  /**
   * Changes whether a pending timer keeps the process alive. Optional: clocks without it
   * (a manual clock) keep no process alive anyway.
   */
  setKeepAlive?(handle: TimerHandle, keepAlive: boolean): void;
  /**
   * True when `now()` costs next to nothing (a manual clock). Policies then read it whenever
   * they need the time; otherwise (the system clock, where a reading costs about 50 ns) some
   * of them save readings on hot paths, e.g. an open breaker learns from a shared timer when
   * its break may be over instead of reading the clock on every refused call.
   */
  readonly cheapNow?: boolean;
}
