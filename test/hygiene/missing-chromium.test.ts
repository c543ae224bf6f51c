/**
 * Without Chromium the browser tests are skipped with one loud line on a developer's machine,
 * and fail when the CI variable is set. Runs Vitest on the browser test file in a child process
 * with BREAKWATER_CHROMIUM naming a browser that does not exist (nothing is launched).
 */
import { expect, it } from 'vitest';
import { runVitestFile } from '../support/vitestRun.js';

function runBrowserTests(ci: boolean): Promise<{ code: number; output: string }> {
  return runVitestFile('test/observability/dashboard.browser.test.ts', {
    ci,
    env: { BREAKWATER_CHROMIUM: '/nonexistent/chromium' },
  });
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
