/**
 * The library under test, from its build (dist/). The runner copies dist/ once per run and
 * passes the copy in BREAKWATER_DIST, so every process of a run measures the same build even
 * if dist/ is rebuilt while the benchmarks run. Run alone, a scenario uses dist/ directly.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const snapshot = process.env.BREAKWATER_DIST;
const entry = snapshot
  ? pathToFileURL(join(snapshot, 'index.js')).href
  : new URL('../../dist/index.js', import.meta.url).href;

const lib = await import(entry);

export const { VERSION, bulkhead, circuitBreaker, isBrokenCircuitError, pipeline, retry, timeout } =
  lib;
