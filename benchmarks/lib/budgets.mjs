/**
 * Per-call budgets from the issue, checked against the rows of a run. `overhead*` limits are
 * over the bare row of the same scenario; `nsPerOp`/`bytesPerOp` limits are absolute.
 */

export const BUDGETS = [
  {
    id: 'closed-breaker',
    label: 'closed breaker, execute: over bare await',
    scenario: 'breaker-closed',
    variant: 'execute, async target',
    limits: { overheadNs: 30, overheadBytes: 150 },
  },
  {
    id: 'open-breaker-try-forced',
    label: 'open breaker (forceOpen), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, forceOpen',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
  {
    id: 'open-breaker-try-tripped',
    label: 'open breaker (tripped), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, trip',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
  {
    id: 'composed',
    label: 'composed four-policy pipeline: over bare await',
    scenario: 'composed',
    variant: 'execute, async target',
    limits: { overheadNs: 150, overheadBytes: 300 },
  },
  {
    id: 'sync-breaker',
    label: 'sync breaker path, executeSync',
    scenario: 'breaker-closed',
    variant: 'executeSync, sync target',
    limits: { bytesPerOp: 0 },
  },
];

const UNIT = { overheadNs: 'ns', nsPerOp: 'ns', overheadBytes: 'B', bytesPerOp: 'B' };

/**
 * Byte figures are compared to the nearest byte: every real allocation is at least 16 bytes,
 * so a fraction of a byte per call is measurement residue, not an allocation.
 */
function within(metric, value, limit) {
  return UNIT[metric] === 'B' ? Math.round(value) <= limit : value <= limit;
}

export function checkBudgets(rows) {
  return BUDGETS.map((b) => {
    const row = rows.find((r) => r.scenario === b.scenario && r.variant === b.variant);
    const checks = Object.entries(b.limits).map(([metric, limit]) => {
      const value = row?.[metric];
      const measured = typeof value === 'number' && Number.isFinite(value);
      return {
        metric,
        limit,
        unit: UNIT[metric],
        value: measured ? value : null,
        pass: measured ? within(metric, value, limit) : null,
      };
    });
    const pass = checks.some((c) => c.pass === null) ? null : checks.every((c) => c.pass);
    return { id: b.id, label: b.label, scenario: b.scenario, variant: b.variant, checks, pass };
  });
}

/** 'PASS', 'MISS' or 'n/a' (row not measured, e.g. filtered out). */
export function verdict(pass) {
  return pass === null ? 'n/a' : pass ? 'PASS' : 'MISS';
}
