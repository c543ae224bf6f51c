/**
 * The library under test, from its build (dist/). The runner copies dist/ once per run and
 * passes the copy in BREAKWATER_DIST, so every process of a run measures the same build even
 * if dist/ is rebuilt while the benchmarks run. Run alone, a scenario uses dist/ directly.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const snapshot = process.env.BREAKWATER_DIST;
const file = (name) =>
  snapshot
    ? pathToFileURL(join(snapshot, name)).href
    : new URL(`../../dist/${name}`, import.meta.url).href;

const lib = await import(file('index.js'));

export const {
  VERSION,
  CircuitBreaker,
  Registry,
  diagnosticsChannels,
  adaptiveLimit,
  bulkhead,
  chaos,
  circuitBreaker,
  hedge,
  isBrokenCircuitError,
  loadShedder,
  pipeline,
  retry,
  retryBudget,
  timeout,
} = lib;

/** `breakwater/decorators`, or undefined for a build that has none. */
export const decorators = await import(file('decorators/index.js')).catch(() => undefined);
