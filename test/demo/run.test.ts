/**
 * The demo CLI end to end, in a child process, against the BUILT package (demo/ imports
 * `breakwater` by name). It builds nothing: `npm test` runs `npm run build` before Vitest.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  const line = stdout.split('\n').find((l) => l.startsWith(label));
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

    const [guarded, plain] = summaryRow(run.stdout, 'reached dependency').map(Number);
    expect(guarded).toBeGreaterThan(0);
    expect(guarded, run.stdout).toBeLessThan(plain!);
    const [rejected, plainRejected] = summaryRow(run.stdout, 'rejected fast').map(Number);
    expect(rejected).toBeGreaterThan(0);
    expect(plainRejected).toBe(0);
    // Unprotected callers waited out the slow phase; the timeout spared the protected ones.
    const [guardedMax, plainMax] = summaryRow(run.stdout, 'max latency ms').map(Number);
    expect(plainMax).toBeGreaterThanOrEqual(1500);
    expect(guardedMax, run.stdout).toBeLessThan(1500);
  }, 30_000);

  it('prints its usage for --help and exits 0', async () => {
    const run = await runDemo(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--seconds N/);
    expect(run.stdout).toMatch(/--phases A,B,C,D/);
  });

  it('exits 2 with a message and the usage for a bad option', async () => {
    const run = await runDemo(['--seconds', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Expected --seconds to be a positive number, got "soon"/);
    expect(run.stderr).toMatch(/Usage:/);
  });
});
