/**
 * Smoke test of the benchmark suite: `node benchmarks/run.mjs --quick --json FILE` in a child
 * process must measure every scenario and write a complete report. The figures of a quick run
 * mean nothing; this pins that the harness runs end to end and reports every row. run.mjs
 * installs benchmarks/ dependencies (npm ci) and builds dist/ itself when they are missing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const scenarioIds = readdirSync(join(root, 'benchmarks', 'scenarios'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => basename(f, '.mjs'));

interface Row {
  scenario: string;
  library: string;
  variant: string;
  nsPerOp: number;
  nsSpread: [number, number];
  bytesPerOp: number;
  overheadNs: number;
  overheadBytes: number;
  baseline: string | null;
}
interface Report {
  machine: { node: string; v8: string; cpu: string; cores: number; os: string };
  rows: Row[];
  budgets: { id: string; pass: boolean | null }[];
}

const dir = mkdtempSync(join(tmpdir(), 'breakwater-bench-'));
const jsonFile = join(dir, 'bench.json');
let report: Report;
let stdout = '';

beforeAll(async () => {
  const run = await promisify(execFile)(
    process.execPath,
    ['benchmarks/run.mjs', '--quick', '--json', jsonFile],
    { cwd: root, timeout: 55_000, maxBuffer: 16 * 2 ** 20 },
  );
  stdout = run.stdout;
  report = JSON.parse(readFileSync(jsonFile, 'utf8')) as Report;
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench -- --quick --json FILE', () => {
  it('finds the scenario files to run', () => {
    expect(scenarioIds.length).toBeGreaterThanOrEqual(9);
  });

  it.each(scenarioIds)('reports a bare row and a breakwater row for scenario %s', (id) => {
    const rows = report.rows.filter((r) => r.scenario === id);
    expect(rows.some((r) => r.library === 'bare')).toBe(true);
    if (id !== 'bare') expect(rows.some((r) => r.library === 'breakwater')).toBe(true);
  });

  it('gives every row finite figures and a spread around its median', () => {
    expect(report.rows.length).toBeGreaterThan(scenarioIds.length);
    for (const r of report.rows) {
      const figures = [r.nsPerOp, ...r.nsSpread, r.bytesPerOp, r.overheadNs, r.overheadBytes];
      expect(figures.every(Number.isFinite), `${r.scenario} / ${r.variant}`).toBe(true);
      expect(r.nsPerOp).toBeGreaterThan(0);
      expect(r.nsSpread[0]).toBeLessThanOrEqual(r.nsPerOp);
      expect(r.nsSpread[1]).toBeGreaterThanOrEqual(r.nsPerOp);
    }
  });

  it('measures each library row against a bare row of the same scenario', () => {
    for (const r of report.rows.filter((row) => row.library !== 'bare')) {
      const base = report.rows.find((b) => b.scenario === r.scenario && b.variant === r.baseline);
      expect(base?.library, `${r.scenario} / ${r.variant}`).toBe('bare');
    }
  });

  it('sees the allocation of an awaited async call (two promises) in the bare row', () => {
    const bare = report.rows.find((r) => r.scenario === 'bare' && r.variant === 'await target()');
    // 248 B on Node 20 x64 in a full run; a quick run's small batches add a few bytes.
    expect(bare?.bytesPerOp).toBeGreaterThan(100);
  });

  it('judges every budget and describes the machine', () => {
    expect(report.budgets.map((b) => b.id)).toEqual([
      'closed-breaker',
      'open-breaker-try-forced',
      'open-breaker-try-tripped',
      'composed',
      'sync-breaker',
    ]);
    expect(report.budgets.every((b) => typeof b.pass === 'boolean')).toBe(true);
    expect(report.machine.node).toBe(process.version);
    expect(report.machine.cores).toBeGreaterThan(0);
  });

  it('prints the table with the budgets', () => {
    expect(stdout).toContain('Budgets');
    for (const id of scenarioIds) expect(stdout).toContain(id);
  });
});
