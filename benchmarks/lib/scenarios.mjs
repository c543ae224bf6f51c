/** The scenario files of benchmarks/scenarios/, loaded in the order the report lists them. */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDir } from './env.mjs';

/**
 * Every scenario as `{ id, file, module }`, sorted by the module's `order` then id. Loading a
 * scenario loads the library (lib/breakwater.mjs) and the peers: set BREAKWATER_DIST first
 * when a run measures a snapshot of dist/.
 */
export async function loadScenarios() {
  const dir = join(benchDir, 'scenarios');
  const out = [];
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.mjs'))) {
    const file = join(dir, name);
    out.push({ id: basename(name, '.mjs'), file, module: await import(pathToFileURL(file).href) });
  }
  return out.sort(
    (a, b) => (a.module.order ?? 100) - (b.module.order ?? 100) || a.id.localeCompare(b.id),
  );
}
