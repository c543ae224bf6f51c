/**
 * Judges the budgets the scenarios export (`export const budgets = [...]` in
 * scenarios/<id>.mjs) against the rows of a run.
 *
 * - `ratio` budgets compare breakwater with the peers measured in the same run: the peer's
 *   figure divided by breakwater's must reach `minRatio` (one check per peer row).
 * - `limit` budgets are breakwater's own absolute limits: `overhead*` over the bare row of the
 *   same scenario, `nsPerOp`/`bytesPerOp` absolute, or a figure a memory row reports (a
 *   budget names its row by variant, or by a pattern when the variant holds a count that
 *   --quick changes). With `over: { scenario, variant }` each limit holds the row's figure
 *   minus that breakwater row's figure in the same run (e.g. a hedge's overhead over the
 *   aggressive timeout's, the structure it cannot do without).
 * - `versus` budgets limit a row's cost over another breakwater row of the same scenario (its
 *   `versus` row, measured in the same process), one check per scenario.
 * - `na` budgets cannot be judged yet (the breakwater feature does not exist).
 *
 * Every budget has a `rank`, its place in the report's budget lists (the console's, and the
 * doc's two tables: ratio and na budgets, then limit and versus budgets).
 */

const BW = 'breakwater';

/** The budgets of every scenario (as loadScenarios returns them), in the order of their rank. */
export function scenarioBudgets(scenarios) {
  return scenarios.flatMap((s) => s.module.budgets ?? []).sort((a, b) => a.rank - b.rank);
}

const UNIT = {
  overheadNs: 'ns',
  nsPerOp: 'ns',
  versusNs: 'ns',
  versusBytes: 'B',
  overheadBytes: 'B',
  bytesPerOp: 'B',
  heapGrowthPct: '%',
  overheadPct: '%',
  spreadNs: 'ns',
  throughputLossPct: '%',
};

const finite = (x) => typeof x === 'number' && Number.isFinite(x);

/**
 * Byte figures are compared to the nearest byte: every real allocation is at least 16 bytes,
 * so a fraction of a byte per call is measurement residue, not an allocation.
 */
function within(metric, value, limit) {
  return UNIT[metric] === 'B' ? Math.round(value) <= limit : value <= limit;
}

function find(rows, scenario, library, variant) {
  const named = (v) => (variant instanceof RegExp ? variant.test(v) : v === variant);
  return rows.find((r) => r.scenario === scenario && r.library === library && named(r.variant));
}

function overall(checks) {
  return checks.length === 0 || checks.some((c) => c.pass === null)
    ? null
    : checks.every((c) => c.pass);
}

function judgeRatio(b, rows) {
  const ours = find(rows, b.ours.scenario, b.ours.library, b.ours.variant);
  const ourValue = ours?.[b.metric];
  const checks = b.peers.map((p) => {
    const peer = find(rows, p.scenario ?? b.ours.scenario, p.library, p.variant);
    const peerValue = peer?.[b.metric];
    if (!finite(ourValue) || !finite(peerValue)) {
      return {
        against: p.library,
        variant: p.variant,
        ours: null,
        peer: null,
        ratio: null,
        pass: null,
      };
    }
    // An overhead under 1 ns (at or below the bare call, within its noise) counts as 1 ns, so
    // the ratio stays a finite number in the JSON report.
    const ratio = peerValue / Math.max(ourValue, 1);
    return {
      against: p.library,
      variant: p.variant,
      ours: ourValue,
      peer: peerValue,
      ratio,
      pass: ratio >= b.minRatio,
    };
  });
  return {
    id: b.id,
    kind: b.kind,
    label: b.label,
    scenario: b.ours.scenario,
    variant: b.ours.variant,
    metric: b.metric,
    unit: UNIT[b.metric],
    minRatio: b.minRatio,
    checks,
    pass: overall(checks),
  };
}

function judgeLimit(b, rows) {
  const row = find(rows, b.scenario, BW, b.variant);
  const base = b.over ? find(rows, b.over.scenario, BW, b.over.variant) : undefined;
  const over = b.over ? `${b.over.scenario} / ${b.over.variant}` : null;
  const checks = Object.entries(b.limits).map(([metric, limit]) => {
    const value = b.over ? row?.[metric] - base?.[metric] : row?.[metric];
    const measured = finite(value);
    return {
      metric,
      limit,
      unit: UNIT[metric],
      value: measured ? value : null,
      over,
      pass: measured ? within(metric, value, limit) : null,
    };
  });
  return {
    id: b.id,
    kind: b.kind,
    label: b.label,
    scenario: b.scenario,
    variant: row?.variant ?? String(b.variant),
    checks,
    pass: overall(checks),
  };
}

function judgeVersus(b, rows) {
  const checks = b.rows.map(({ scenario, variant }) => {
    const row = find(rows, scenario, BW, variant);
    const value = row?.[b.metric];
    const measured = finite(value);
    return {
      scenario,
      variant,
      against: row?.versus ?? null,
      value: measured ? value : null,
      pass: measured ? within(b.metric, value, b.limit) : null,
    };
  });
  return {
    id: b.id,
    kind: b.kind,
    label: b.label,
    metric: b.metric,
    unit: UNIT[b.metric],
    limit: b.limit,
    checks,
    pass: overall(checks),
  };
}

/** The verdict of each budget on the rows of a run. */
export function checkBudgets(rows, budgets) {
  return budgets.map((b) => {
    if (b.kind === 'ratio') return judgeRatio(b, rows);
    if (b.kind === 'limit') return judgeLimit(b, rows);
    if (b.kind === 'versus') return judgeVersus(b, rows);
    return {
      id: b.id,
      kind: b.kind,
      label: b.label,
      scenario: b.scenario,
      reason: b.reason,
      checks: [],
      pass: null,
    };
  });
}

/** 'PASS', 'MISS' or 'n/a' (not judged: row not measured, or the feature does not exist). */
export function verdict(pass) {
  return pass === null ? 'n/a' : pass ? 'PASS' : 'MISS';
}
