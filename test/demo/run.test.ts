/**
 * The demo CLI end to end, in a child process, against the BUILT package (demo/ imports
 * `breakwater` by name). It builds nothing: `npm test` runs `npm run build` before Vitest.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node demo/run.mjs ...args`; never kills it, so a run that does not exit times out. */
function runDemo(args: string[]): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['demo/run.mjs', ...args],
      { cwd: root, timeout: 0, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** The protected and unprotected cells of a summary row. */
function summaryRow(stdout: string, label: string): [string, string] {
  const line = stdout.split('\n').find((l) => l.startsWith(`${label}  `));
  if (line === undefined) throw new Error(`No "${label}" row in:\n${stdout}`);
  const cells = line.slice(label.length).trim().split(/\s+/);
  expect(cells, line).toHaveLength(2);
  return [cells[0]!, cells[1]!];
}

beforeAll(() => {
  if (!existsSync(`${root}dist/index.js`)) {
    throw new Error('The package is not built: run npm run build first (npm test does).');
  }
});

describe('npm run demo', () => {
  it('builds without the build log (some 280 lines): only warnings and errors are shown', () => {
    const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.demo).toMatch(/^npm run build:quiet --silent && node demo\/run\.mjs$/);
    expect(scripts['build:quiet']).toBe('tsdown --logLevel warn');
  });

  it('runs a 6 s schedule, shows the breaker opening, protects the dependency and exits 0', async () => {
    const run = await runDemo(['--seconds', '6']);
    expect(run.stderr).toBe('');
    expect(run.code, run.stdout).toBe(0);

    const seconds = run.stdout.split('\n').filter((l) => /^\s*\d+s /.test(l));
    expect(seconds.map((l) => l.trim().split(/\s+/)[0])).toEqual([
      '1s',
      '2s',
      '3s',
      '4s',
      '5s',
      '6s',
    ]);
    // Columns: t, phase, breaker state, ...
    const states = seconds.map((l) => l.trim().split(/\s+/)[2]);
    expect(states, run.stdout).toContain('open');
    expect(run.stdout).toMatch(/closed->open/);
    const phases = seconds.map((l) => l.trim().split(/\s+/)[1]);
    expect(new Set(phases)).toEqual(new Set(['healthy', 'failing', 'slow', 'recovered']));

    // What callers got within their 1 s deadline: the unprotected ones waited out the slow
    // phase (too late) and saw the failing phase's errors; the protected ones got a fallback.
    const [good, plainGood] = summaryRow(run.stdout, 'good (answered within 1000 ms)').map(Number);
    expect(good).toBeGreaterThan(0);
    expect(plainGood).toBeGreaterThan(0);
    const [fallbacks, plainFallbacks] = summaryRow(run.stdout, 'fallback served').map(Number);
    expect(fallbacks).toBeGreaterThan(0);
    expect(plainFallbacks).toBe(0);
    const [failed, plainFailed] = summaryRow(run.stdout, 'failed (an error in time)').map(Number);
    expect(failed).toBe(0);
    expect(plainFailed).toBeGreaterThan(0);
    const [, plainLate] = summaryRow(run.stdout, 'too late (after 1000 ms)').map(Number);
    expect(plainLate).toBeGreaterThan(0);
    const [refused, plainRefused] = summaryRow(run.stdout, 'refused without calling').map(Number);
    expect(refused).toBeGreaterThan(0);
    expect(plainRefused).toBe(0);
    // Protection bought shorter waits and less load on the dependency.
    const [waited, plainWaited] = summaryRow(run.stdout, 'waited in all, s').map(Number);
    expect(waited, run.stdout).toBeLessThan(plainWaited!);
    const [guarded, plain] = summaryRow(run.stdout, 'requests to the dependency').map(Number);
    expect(guarded).toBeGreaterThan(0);
    expect(guarded, run.stdout).toBeLessThan(plain!);
    const [peak, plainPeak] = summaryRow(run.stdout, '  in flight there, peak').map(Number);
    expect(peak, run.stdout).toBeLessThan(plainPeak!);
    expect(run.stdout).toMatch(
      /^Answered within 1000 ms \(the caller's deadline\): protected \d+ of 300/m,
    );
  }, 30_000);

  it('prints its usage for --help and exits 0', async () => {
    const run = await runDemo(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--seconds N/);
    expect(run.stdout).toMatch(/--phases A,B,C,D/);
    expect(run.stdout).toMatch(/--deadline MS/);
  });

  it('exits 2 with a message and the usage for a bad option', async () => {
    const run = await runDemo(['--seconds', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Expected --seconds to be a positive number, got "soon"/);
    expect(run.stderr).toMatch(/Usage:/);
  });

  it('refuses a deadline that is not a positive number', async () => {
    const run = await runDemo(['--deadline', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Expected --deadline to be a positive number, got "0"/);
  });
});
