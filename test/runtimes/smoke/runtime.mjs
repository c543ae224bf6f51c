// @ts-check
/** Which runtime runs this module, and the one line each smoke run prints. */
import { runChecks } from './checks.mjs';

/** The runtime's name and version, found from its globals (no runtime-specific import). */
export function describeRuntime() {
  /** @type {any} */
  const g = globalThis;
  if (g.Bun) return { runtime: 'bun', version: String(g.Bun.version) };
  if (g.Deno) return { runtime: 'deno', version: String(g.Deno.version.deno) };
  const agent = String(g.navigator?.userAgent ?? '');
  if (agent === 'Cloudflare-Workers') return { runtime: 'workerd', version: 'n/a' };
  if (g.process?.versions?.node)
    return { runtime: 'node', version: String(g.process.versions.node) };
  const chrome = /(?:HeadlessChrome|Chrome)\/([\d.]+)/.exec(agent);
  if (chrome) return { runtime: 'chromium', version: chrome[1] };
  return { runtime: 'unknown', version: agent || 'n/a' };
}

/**
 * Runs the suite and returns its result with the line to print:
 * `breakwater smoke: <runtime> <version>: <passed> passed, <failed> failed`, then one line per
 * failure.
 * @param {string} [knownVersion] For a runtime that does not tell its own (workerd).
 */
export async function runSmoke(knownVersion) {
  const found = describeRuntime();
  const runtime = found.runtime;
  const version = knownVersion ?? found.version;
  const result = await runChecks();
  const line = `breakwater smoke: ${runtime} ${version}: ${result.passed} passed, ${result.failed} failed`;
  const text = [line, ...result.failures.map((f) => `  failed: ${f}`)].join('\n');
  return { runtime, version, ...result, text };
}
