/**
 * Without Chromium the browser tests are skipped with one loud line on a developer's machine,
 * and fail when the CI variable is set. Runs Vitest on the browser test file in a child process
 * with BREAKWATER_CHROMIUM naming a browser that does not exist (nothing is launched).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const vitest = join(
  dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
  'vitest.mjs',
);

async function runBrowserTests(ci: boolean): Promise<{ code: number; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, BREAKWATER_CHROMIUM: '/nonexistent/chromium' };
  delete env.CI;
  if (ci) env.CI = 'true';
  return promisify(execFile)(
    process.execPath,
    [
      vitest,
      'run',
      'test/observability/dashboard.browser.test.ts',
      '--reporter=default',
      '--color=false',
    ],
    { cwd: root, env, timeout: 60_000 },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  );
}

it('without Chromium the browser tests are skipped with one loud line, outside CI', async () => {
  const { code, output } = await runBrowserTests(false);
  expect(code).toBe(0);
  expect(
    output.match(
      /!!! SKIPPED browser tests: Chromium is not installed at \/nonexistent\/chromium/g,
    ),
  ).toHaveLength(1);
  expect(output).toMatch(/skipped/);
  expect(output).not.toMatch(/\d+ passed/);
}, 70_000);

it('without Chromium the browser tests fail when CI is set', async () => {
  const { code, output } = await runBrowserTests(true);
  expect(code).not.toBe(0);
  expect(output).toContain('needs Chromium (CI is set, so this fails instead of skipping)');
  expect(output).not.toContain('SKIPPED browser tests');
}, 70_000);
