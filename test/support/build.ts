/**
 * A build of src/index.ts as one ES module, for child processes that must run the library as
 * it is now (test/hygiene uses the package built in dist/ instead). Builds go to
 * test-artifacts/<name>/ (not committed).
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'tsdown';

/** The repository root, with a trailing slash. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Builds src/index.ts into test-artifacts/`name`/index.js and returns that file's path; with
 * `entries` (output name -> source file), builds those instead (the code they share in one
 * chunk) and returns the path of the first.
 */
export async function buildLibrary(
  name: string,
  entries: Readonly<Record<string, string>> = { index: 'src/index.ts' },
): Promise<string> {
  const outDir = `${root}test-artifacts/${name}`;
  await rm(outDir, { recursive: true, force: true });
  await build({
    config: false,
    entry: { ...entries },
    outDir,
    format: ['esm'],
    platform: 'neutral',
    target: 'es2022',
    dts: false,
    sourcemap: false,
    logLevel: 'silent',
  });
  return `${outDir}/${Object.keys(entries)[0]}.js`;
}
