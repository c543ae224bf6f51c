/**
 * Runs Vitest on one test file in a child process, with the CI variable set or unset, for the
 * tests of what a test file does when something it needs is missing.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { root } from './build.js';

const vitest = join(
  dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
  'vitest.mjs',
);

/** Vitest's exit code and everything it wrote, running `file` with `env` added. */
export async function runVitestFile(
  file: string,
  options: { readonly ci: boolean; readonly env: Readonly<Record<string, string>> },
): Promise<{ code: number; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.CI;
  if (options.ci) env.CI = 'true';
  return promisify(execFile)(
    process.execPath,
    [vitest, 'run', file, '--reporter=default', '--color=false'],
    { cwd: root, env, timeout: 60_000 },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  );
}
