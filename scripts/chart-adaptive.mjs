// @ts-check
/**
 * Draws the per-second series of a concurrency limit's run as one self-contained SVG (no
 * dependency, no script, no external font): the limit and the calls in flight over time above,
 * the p50 and p99 latency over time below, with axes, a legend and a title.
 *
 * Usage:
 *   node scripts/chart-adaptive.mjs [series.json | -] [--out chart.svg] [--title "..."]
 *
 * The input (a file, or stdin when it is `-` or left out) is a JSON array of points
 * `{ "t": 0, "limit": 20, "inflight": 18.5, "p50": 21, "p99": 60 }`, t in seconds and strictly
 * increasing, latencies in ms; a figure that is missing or null leaves a gap in its line. The
 * SVG goes to `--out`, or to stdout. The same drawing is `renderChart(points, options)` for
 * code that has the series in hand.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One second of a run.
 * @typedef {object} ChartPoint
 * @property {number} t Seconds since the start of the run.
 * @property {number | null} [limit] The concurrency limit.
 * @property {number | null} [inflight] Calls in flight (a mean over the second, or a reading).
 * @property {number | null} [p50] The median latency of the calls admitted, ms.
 * @property {number | null} [p99] The 99th percentile latency of the calls admitted, ms.
 */

/**
 * @typedef {object} ChartOptions
 * @property {string} [title] The chart's title. Default "Concurrency limit and latency".
 * @property {number} [width] In px, at least 320. Default 800.
 * @property {number} [height] In px, at least 320. Default 520.
 */

/** @typedef {'limit' | 'inflight' | 'p50' | 'p99'} SeriesKey */

/**
 * The lines drawn, in drawing order, and the panel each belongs to.
 * @type {readonly { key: SeriesKey, label: string, panel: 0 | 1, color: string, width: number }[]}
 */
export const LINES = [
  { key: 'limit', label: 'limit', panel: 0, color: '#1f77b4', width: 2 },
  { key: 'inflight', label: 'in flight', panel: 0, color: '#ff7f0e', width: 1.5 },
  { key: 'p50', label: 'p50', panel: 1, color: '#2ca02c', width: 1.5 },
  { key: 'p99', label: 'p99', panel: 1, color: '#d62728', width: 1.5 },
];

/** The two panels: their names (in `data-panel`) and their y-axis titles. */
export const PANELS = [
  { name: 'concurrency', axis: 'calls' },
  { name: 'latency', axis: 'latency (ms)' },
];

const DEFAULT_TITLE = 'Concurrency limit and latency';
const FIGURES = /** @type {const} */ (['limit', 'inflight', 'p50', 'p99']);

/**
 * Checks a parsed JSON value and returns it as points, or throws a TypeError naming the first
 * bad entry, its field and its value.
 * @param {unknown} value
 * @returns {ChartPoint[]}
 */
export function toPoints(value) {
  if (!Array.isArray(value))
    throw new TypeError(`series must be an array of points: ${kind(value)}`);
  if (value.length === 0) throw new TypeError('series must hold at least one point');
  /** @type {ChartPoint[]} */
  const points = [];
  value.forEach((entry, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new TypeError(`series[${i}] must be an object: ${kind(entry)}`);
    }
    const p = /** @type {Record<string, unknown>} */ (entry);
    if (typeof p.t !== 'number' || !Number.isFinite(p.t)) {
      throw new TypeError(`series[${i}].t must be a finite number (seconds): ${show(p.t)}`);
    }
    if (i > 0 && !(p.t > points[i - 1].t)) {
      throw new TypeError(
        `series[${i}].t must be greater than series[${i - 1}].t (${points[i - 1].t}): ${p.t}`,
      );
    }
    /** @type {ChartPoint} */
    const point = { t: p.t };
    for (const key of FIGURES) {
      const v = p[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
        throw new TypeError(
          `series[${i}].${key} must be a finite number >= 0, null or left out: ${show(v)}`,
        );
      }
      point[key] = v;
    }
    points.push(point);
  });
  return points;
}

/** @param {unknown} v */
function kind(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** @param {unknown} v */
function show(v) {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/**
 * A round step (1, 2 or 5 times a power of ten) that cuts `span` into about `count` parts.
 * @param {number} span
 * @param {number} count
 */
export function niceStep(span, count) {
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
}

/** A coordinate with one decimal, never "-0". @param {number} v */
function px(v) {
  const r = Math.round(v * 10) / 10;
  return String(r === 0 ? 0 : r);
}

/** @param {string} text */
function escapeXml(text) {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

/**
 * Tick values from `from` to `to` (both included when on the grid) every `step`, as labels.
 * @param {number} from
 * @param {number} to
 * @param {number} step
 * @returns {{ value: number, label: string }[]}
 */
function ticks(from, to, step) {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const out = [];
  for (let k = Math.ceil(from / step - 1e-9); k * step <= to + step * 1e-9; k++) {
    const value = k * step;
    out.push({ value, label: (value === 0 ? 0 : value).toFixed(decimals) });
  }
  return out;
}

/**
 * The series as an SVG document.
 * @param {readonly ChartPoint[]} points At least one, t strictly increasing (see {@link toPoints}).
 *   NaN, null or a missing figure leaves a gap.
 * @param {ChartOptions} [options]
 * @returns {string}
 */
export function renderChart(points, options = {}) {
  const title = options.title ?? DEFAULT_TITLE;
  const width = options.width ?? 800;
  const height = options.height ?? 520;
  if (!(width >= 320) || !(height >= 320)) {
    throw new RangeError(`width and height must be at least 320 px: ${width} x ${height}`);
  }
  if (points.length === 0) throw new TypeError('series must hold at least one point');

  const left = 64;
  const right = 24;
  const top = 64;
  const gap = 60;
  const bottom = 52;
  const plotWidth = width - left - right;
  const plotHeight = (height - top - gap - bottom) / 2;

  const first = points[0].t;
  const last = points[points.length - 1].t;
  const [xMin, xMax] = first === last ? [first - 0.5, last + 0.5] : [first, last];
  const xStep = niceStep(xMax - xMin, Math.max(2, Math.floor(plotWidth / 80)));
  const x = (/** @type {number} */ t) => left + ((t - xMin) / (xMax - xMin)) * plotWidth;

  /** @type {string[]} */
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text class="title" x="${px(width / 2)}" y="28" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
  ];

  PANELS.forEach((panel, index) => {
    const y0 = top + index * (plotHeight + gap);
    const lines = LINES.filter((line) => line.panel === index);
    let max = 0;
    for (const p of points) {
      for (const line of lines) {
        const v = p[line.key];
        if (typeof v === 'number' && v > max) max = v;
      }
    }
    // Headroom keeps a line at the panel's largest figure off its frame; a panel with no
    // figure above 0 still gets an axis, of [0, 1].
    const span = max > 0 ? max * 1.05 : 1;
    const yStep = niceStep(span, 4);
    const yMax = Math.ceil(span / yStep - 1e-9) * yStep;
    const y = (/** @type {number} */ v) => y0 + plotHeight - (v / yMax) * plotHeight;

    out.push(`<g class="panel" data-panel="${panel.name}">`);
    out.push(
      `<rect class="plot" x="${px(left)}" y="${px(y0)}" width="${px(plotWidth)}" height="${px(plotHeight)}" fill="none" stroke="#888888"/>`,
    );
    out.push('<g class="y-axis" text-anchor="end">');
    for (const tick of ticks(0, yMax, yStep)) {
      const ty = px(y(tick.value));
      out.push(
        `<line x1="${px(left)}" y1="${ty}" x2="${px(left + plotWidth)}" y2="${ty}" stroke="#e5e5e5"/>`,
        `<text x="${px(left - 6)}" y="${ty}" dy="4">${tick.label}</text>`,
      );
    }
    out.push('</g>');
    out.push('<g class="x-axis" text-anchor="middle">');
    for (const tick of ticks(xMin, xMax, xStep)) {
      const tx = px(x(tick.value));
      out.push(
        `<line x1="${tx}" y1="${px(y0 + plotHeight)}" x2="${tx}" y2="${px(y0 + plotHeight + 4)}" stroke="#888888"/>`,
        `<text x="${tx}" y="${px(y0 + plotHeight + 17)}">${tick.label}</text>`,
      );
    }
    out.push('</g>');
    const cy = px(y0 + plotHeight / 2);
    out.push(
      `<text class="axis-title" x="18" y="${cy}" text-anchor="middle" transform="rotate(-90 18 ${cy})">${panel.axis}</text>`,
    );
    out.push('<g class="legend">');
    let lx = left;
    for (const line of lines) {
      const ly = px(y0 - 10);
      out.push(
        `<line x1="${px(lx)}" y1="${ly}" x2="${px(lx + 18)}" y2="${ly}" stroke="${line.color}" stroke-width="${line.width + 1}"/>`,
        `<text x="${px(lx + 22)}" y="${ly}" dy="4">${line.label}</text>`,
      );
      lx += 22 + 7 * line.label.length + 18;
    }
    out.push('</g>');
    for (const line of lines) {
      /** @type {string[]} */
      let run = [];
      const flush = () => {
        if (run.length > 0) {
          out.push(
            `<polyline class="series" data-series="${line.key}" points="${run.join(' ')}" fill="none" stroke="${line.color}" stroke-width="${line.width}" stroke-linejoin="round"/>`,
          );
        }
        run = [];
      };
      for (const p of points) {
        const v = p[line.key];
        if (typeof v === 'number' && Number.isFinite(v)) run.push(`${px(x(p.t))},${px(y(v))}`);
        else flush();
      }
      flush();
    }
    out.push('</g>');
  });

  out.push(
    `<text class="axis-title" x="${px(left + plotWidth / 2)}" y="${height - 12}" text-anchor="middle">time (s)</text>`,
    '</svg>',
    '',
  );
  return out.join('\n');
}

/**
 * The command line: reads the series, writes the SVG.
 * @param {readonly string[]} args
 * @returns {number} The exit code.
 */
function main(args) {
  /** @type {string | undefined} */
  let input;
  /** @type {string | undefined} */
  let output;
  /** @type {ChartOptions} */
  const options = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--out' || arg === '--title') {
      const value = args[++i];
      if (value === undefined) throw new TypeError(`${arg} needs a value`);
      if (arg === '--out') output = value;
      else options.title = value;
    } else if (arg.startsWith('--')) {
      throw new TypeError(`unknown option ${arg} (known: --out FILE, --title TEXT)`);
    } else if (input === undefined) {
      input = arg;
    } else {
      throw new TypeError(`one input only: ${input} and ${arg}`);
    }
  }
  const text = readFileSync(input === undefined || input === '-' ? 0 : input, 'utf8');
  const svg = renderChart(toPoints(JSON.parse(text)), options);
  if (output === undefined) process.stdout.write(svg);
  else writeFileSync(output, svg);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`chart-adaptive: ${error instanceof Error ? error.message : error}\n`);
    process.exitCode = 1;
  }
}
