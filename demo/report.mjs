// @ts-check
/**
 * What the demo prints, computed from recorded samples only: per-second lines and the final
 * comparison table. No clock, no I/O.
 */

/**
 * How one call through the load generator ended.
 * - `ok`: the dependency answered with a status below 500;
 * - `failed`: an error status, a network error or a timeout;
 * - `rejected`: a policy refused the call without calling the dependency (open breaker, full
 *   bulkhead).
 * @typedef {'ok' | 'failed' | 'rejected'} Outcome
 */

/**
 * One finished call.
 * @typedef {object} Sample
 * @property {number} t When the call finished, in ms since the run began.
 * @property {number} latency How long the caller waited, in ms.
 * @property {Outcome} outcome
 */

/**
 * A breaker state change, in ms since the run began.
 * @typedef {{ t: number, from: string, to: string }} Transition
 */

/**
 * Counts over a span of time.
 * @typedef {object} Totals
 * @property {number} calls
 * @property {number} ok
 * @property {number} failed
 * @property {number} rejected
 * @property {number} p99 99th percentile latency of every call that finished (NaN if none).
 * @property {number} max Largest latency (NaN if none).
 * @property {number} reached Requests that reached the dependency.
 */

/**
 * The 99th percentile by the nearest-rank method: the smallest value that at least 99% of the
 * values are less than or equal to. NaN for no values.
 * @param {readonly number[]} values
 * @returns {number}
 */
export function p99(values) {
  return percentile(values, 0.99);
}

/**
 * The `q` quantile (0 < q <= 1) by the nearest-rank method.
 * @param {readonly number[]} values
 * @param {number} q
 * @returns {number}
 */
export function percentile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

/**
 * Totals of the calls that finished, and of the requests that arrived, in [from, to).
 * @param {readonly Sample[]} samples
 * @param {readonly number[]} arrivals When requests reached the dependency (ms since the run began).
 * @param {number} [from]
 * @param {number} [to]
 * @returns {Totals}
 */
export function totals(
  samples,
  arrivals,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
) {
  let ok = 0;
  let failed = 0;
  let rejected = 0;
  let max = Number.NaN;
  /** @type {number[]} */
  const latencies = [];
  for (const s of samples) {
    if (s.t < from || s.t >= to) continue;
    if (s.outcome === 'ok') ok++;
    else if (s.outcome === 'failed') failed++;
    else rejected++;
    latencies.push(s.latency);
    if (!(s.latency <= max)) max = s.latency;
  }
  let reached = 0;
  for (const a of arrivals) if (a >= from && a < to) reached++;
  return {
    calls: latencies.length,
    ok,
    failed,
    rejected,
    p99: p99(latencies),
    max,
    reached,
  };
}

/** Column widths of the per-second lines. */
const COLUMNS = /** @type {const} */ ([
  ['t', 5],
  ['phase', 11],
  ['breaker', 11],
  ['ok', 5],
  ['failed', 7],
  ['rejected', 9],
  ['p99 ms', 8],
  ['reached', 8],
]);

/**
 * The header of the per-second lines.
 * @returns {string}
 */
export function secondHeader() {
  return COLUMNS.map(([label, width], i) => align(label, width, i)).join(' ');
}

/**
 * One per-second line.
 * @param {object} line
 * @param {number} line.second The second that ended (1 for [0 s, 1 s)).
 * @param {string} line.phase The dependency's phase during that second.
 * @param {string} line.state The breaker's state at the end of that second.
 * @param {Totals} line.totals Totals of that second.
 * @param {readonly Transition[]} [line.transitions] Breaker state changes during that second.
 * @returns {string}
 */
export function formatSecond({ second, phase, state, totals: t, transitions = [] }) {
  const cells = [
    `${second}s`,
    phase,
    state,
    String(t.ok),
    String(t.failed),
    String(t.rejected),
    formatMs(t.p99),
    String(t.reached),
  ];
  const text = cells.map((cell, i) => align(cell, COLUMNS[i][1], i)).join(' ');
  if (transitions.length === 0) return text;
  return `${text}  ${transitions.map((tr) => `${tr.from}->${tr.to}`).join(', ')}`;
}

/**
 * Phase and breaker state are text, left-aligned; the rest are right-aligned.
 * @param {string} text
 * @param {number} width
 * @param {number} column
 */
function align(text, width, column) {
  return column === 1 || column === 2 ? text.padEnd(width) : text.padStart(width);
}

/**
 * The comparison table of a protected and an unprotected run.
 * @param {Totals} protectedRun
 * @param {Totals} plainRun
 * @returns {string[]}
 */
export function formatSummary(protectedRun, plainRun) {
  /** @type {[string, (t: Totals) => string][]} */
  const rows = [
    ['calls', (t) => String(t.calls)],
    ['ok', (t) => String(t.ok)],
    ['failed', (t) => String(t.failed)],
    ['rejected fast', (t) => String(t.rejected)],
    ['p99 latency ms', (t) => formatMs(t.p99)],
    ['max latency ms', (t) => formatMs(t.max)],
    ['reached dependency', (t) => String(t.reached)],
  ];
  const label = 20;
  const col = 12;
  return [
    `${''.padEnd(label)}${'protected'.padStart(col)}${'unprotected'.padStart(col)}`,
    ...rows.map(
      ([name, cell]) =>
        `${name.padEnd(label)}${cell(protectedRun).padStart(col)}${cell(plainRun).padStart(col)}`,
    ),
  ];
}

/**
 * A latency for display: whole ms from 10 up, one decimal below, `-` for none.
 * @param {number} ms
 * @returns {string}
 */
export function formatMs(ms) {
  if (Number.isNaN(ms)) return '-';
  const tenths = Math.round(ms * 10) / 10;
  return tenths >= 10 ? String(Math.round(ms)) : tenths.toFixed(1);
}
