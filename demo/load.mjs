// @ts-check
/**
 * The load generator: starts calls at a steady rate whatever the answers are (an open loop, as
 * real clients behave), and records how each one ended. A call's wait counts from when it was
 * due, not from when the event loop got round to starting it: a caller whose call started late
 * waited that long too.
 */

/** @typedef {import('./report.mjs').Outcome} Outcome */
/** @typedef {import('./report.mjs').Sample} Sample */
/** @typedef {{ outcome: Outcome, fallback?: boolean }} Ending How a call ended. */

/**
 * @typedef {object} Load
 * @property {Sample[]} samples Finished calls, in the order they finished (grows while running).
 * @property {() => number} skipped Calls not started because `maxInFlight` were in flight.
 * @property {() => number} maxLag The longest a call was started after it was due, in ms: how
 *   far a busy machine held the load generator back.
 * @property {Promise<void>} done Settles once every call has been started and has finished.
 */

/**
 * Starts `rate` calls per second for `durationMs`: call i starts at i / rate seconds.
 * @param {object} options
 * @param {() => Promise<Ending>} options.call One call; a rejection counts as `failed`.
 * @param {number} options.rate Calls per second.
 * @param {number} options.durationMs
 * @param {() => number} options.now The run's time in ms (0 = when the load starts).
 * @param {number} [options.maxInFlight] Calls in flight at most; a call due beyond that is
 *   skipped rather than queued, so a stuck dependency cannot pile up work without bound.
 * @returns {Load}
 */
export function startLoad({ call, rate, durationMs, now, maxInFlight = 500 }) {
  const interval = 1000 / rate;
  const total = Math.floor((durationMs * rate) / 1000);
  /** @type {Sample[]} */
  const samples = [];
  let started = 0;
  let inFlight = 0;
  let skipped = 0;
  let maxLag = 0;
  /** @type {() => void} */
  let finish = () => {};
  /** @type {Promise<void>} */
  const done = new Promise((resolve) => {
    finish = resolve;
  });

  /** @param {number} due @param {Ending} ending */
  const record = (due, { outcome, fallback = false }) => {
    const t = now();
    samples.push({ t, latency: t - due, outcome, fallback });
    inFlight--;
    if (started === total && inFlight === 0) finish();
  };

  /** @param {number} due */
  const launch = (due) => {
    if (inFlight >= maxInFlight) {
      skipped++;
      return;
    }
    inFlight++;
    const lag = now() - due;
    if (lag > maxLag) maxLag = lag;
    call().then(
      (ending) => record(due, ending),
      () => record(due, { outcome: 'failed' }),
    );
  };

  const tick = () => {
    const t = now();
    // Catch up on calls that fell due while the event loop was busy.
    while (started < total && started * interval <= t) {
      launch(started++ * interval);
    }
    if (started < total) setTimeout(tick, Math.max(0, started * interval - now()));
    else if (inFlight === 0) finish();
  };
  tick();

  return { samples, skipped: () => skipped, maxLag: () => maxLag, done };
}
