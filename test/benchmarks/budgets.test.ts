/**
 * The hedge's judged budget (benchmarks/scenarios/hedge.mjs) on made-up rows: a hedge whose
 * first attempt wins may cost at most +100 ns and +50 B over the aggressive timeout's row of the
 * same run, the structure it cannot do without. It measures nothing (the scenario module loads
 * the built dist/, as every benchmark does).
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Row {
  scenario: string;
  library: string;
  variant: string;
  overheadNs: number;
  overheadBytes: number;
}
interface Verdict {
  id: string;
  pass: boolean | null;
  checks: { metric: string; value: number | null; pass: boolean | null }[];
}
// The harness is plain JavaScript outside the type-checked program: loaded by URL, typed here.
const harness = (file: string) => import(/* @vite-ignore */ pathToFileURL(join(root, file)).href);
const { checkBudgets } = (await harness('benchmarks/lib/budgets.mjs')) as {
  checkBudgets: (rows: Row[], budgets: unknown[]) => Verdict[];
};
const { budgetDetail, budgetSections } = (await harness('benchmarks/lib/report.mjs')) as {
  budgetDetail: (verdict: Verdict) => string;
  budgetSections: (verdicts: Verdict[]) => { ownSummary: string; ownBudgets: string };
};
const { budgets } = (await harness('benchmarks/scenarios/hedge.mjs')) as { budgets: unknown[] };

const HEDGE = 'execute, maxHedges 1, delay 2000';
const AGGRESSIVE = 'execute, aggressive';

/** A run's hedge row and aggressive timeout row with the overheads (over bare await) given. */
function run(hedge: [ns: number, bytes: number], timeout?: [ns: number, bytes: number]): Row[] {
  const rows: Row[] = [
    {
      scenario: 'hedge',
      library: 'breakwater',
      variant: HEDGE,
      overheadNs: hedge[0],
      overheadBytes: hedge[1],
    },
  ];
  if (timeout) {
    rows.push({
      scenario: 'timeout',
      library: 'breakwater',
      variant: AGGRESSIVE,
      overheadNs: timeout[0],
      overheadBytes: timeout[1],
    });
  }
  return rows;
}

const judge = (rows: Row[]) => {
  const [verdict] = checkBudgets(rows, budgets);
  expect(verdict?.id).toBe('hedge-first-wins');
  return verdict!;
};

describe('the hedge budget: at most +100 ns and +50 B over the aggressive timeout of the same run', () => {
  it('passes the run the budget was decided on (+109 ns, +428 B against +86 ns, +386 B)', () => {
    const verdict = judge(run([109, 428], [86, 386]));
    expect(verdict.checks.map((c) => [c.metric, c.value, c.pass])).toEqual([
      ['overheadNs', 23, true],
      ['overheadBytes', 42, true],
    ]);
    expect(verdict.pass).toBe(true);
  });

  it('passes at exactly +100 ns and +50 B, and misses at 1 ns or 1 B more', () => {
    expect(judge(run([186, 436], [86, 386])).pass).toBe(true);
    expect(judge(run([187, 436], [86, 386])).checks.map((c) => c.pass)).toEqual([false, true]);
    expect(judge(run([186, 437], [86, 386])).checks.map((c) => c.pass)).toEqual([true, false]);
  });

  it('judges against the timeout row of the same run, not a fixed figure over bare await', () => {
    // 300 ns over bare would miss any fixed limit the old budget had; 50 ns over the timeout passes.
    expect(judge(run([300, 400], [250, 380])).pass).toBe(true);
  });

  it('is not judged (n/a) when the run has no aggressive timeout row', () => {
    const verdict = judge(run([109, 428]));
    expect(verdict.pass).toBeNull();
    expect(budgetDetail(verdict)).toBe('not measured in this run');
  });

  it("shows on the benchmark page's judged budgets as the difference over the timeout row", () => {
    const { ownSummary, ownBudgets } = budgetSections([judge(run([109, 428], [86, 386]))]);
    expect(ownSummary).toBe('PASS: hedge, first attempt wins: over the aggressive timeout');
    const lines = ownBudgets.split('\n').slice(2);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /\| \+23(\.0)? ns over timeout \/ execute, aggressive \| <= \+100 ns \| \*\*PASS\*\* \|$/,
    );
    expect(lines[1]).toMatch(
      /\| \+42 B over timeout \/ execute, aggressive \| <= \+50 B \| \*\*PASS\*\* \|$/,
    );
  });
});
