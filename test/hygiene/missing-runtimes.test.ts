/**
 * Without the runtimes of test/runtimes/install the smoke suite's runtime tests are skipped with
 * one loud line on a developer's machine, and fail when the CI variable is set. Runs Vitest on
 * the smoke test file in a child process with BREAKWATER_RUNTIMES_DIR (and BREAKWATER_CHROMIUM)
 * naming nothing.
 */
import { expect, it } from 'vitest';
import { runVitestFile } from '../support/vitestRun.js';

function runSmokeTests(ci: boolean): Promise<{ code: number; output: string }> {
  return runVitestFile('test/runtimes/smoke.test.ts', {
    ci,
    env: {
      BREAKWATER_RUNTIMES_DIR: '/nonexistent/runtimes',
      BREAKWATER_CHROMIUM: '/nonexistent/chromium',
    },
  });
}

it('without the runtimes the smoke suite is skipped with one loud line, outside CI', async () => {
  const { code, output } = await runSmokeTests(false);
  expect(code).toBe(0);
  expect(
    output.match(/!!! SKIPPED runtime tests: runtimes not installed \(\/nonexistent\/runtimes/g),
  ).toHaveLength(1);
  expect(output).not.toMatch(/breakwater smoke:/);
  expect(output).not.toMatch(/\d+ passed/);
}, 70_000);

it('without the runtimes the smoke suite fails when CI is set', async () => {
  const { code, output } = await runSmokeTests(true);
  expect(code).not.toBe(0);
  expect(output).toContain('needs the runtimes (CI is set, so this fails instead of skipping)');
  expect(output).not.toContain('SKIPPED runtime tests');
}, 70_000);
