/**
 * Budgets checked against the rows of a run.
 *
 * - `ratio` budgets compare breakwater with the peers measured in the same run: the peer's
 *   figure divided by breakwater's must reach `minRatio` (one check per peer row).
 * - `limit` budgets are breakwater's own absolute limits: `overhead*` over the bare row of the
 *   same scenario, `nsPerOp`/`bytesPerOp` absolute, or a figure a memory row reports (a
 *   budget names its row by variant, or by a pattern when the variant holds a count that
 *   --quick changes).
 * - `versus` budgets limit a row's cost over another breakwater row of the same scenario (its
 *   `versus` row, measured in the same process), one check per scenario.
 * - `na` budgets cannot be judged yet (the breakwater feature does not exist).
 */

const BW = 'breakwater';

export const PEER_BUDGETS = [
  {
    id: 'closed-breaker-vs-cockatiel',
    kind: 'ratio',
    label: 'closed breaker overhead ≤ 1/4 of cockatiel’s',
    metric: 'overheadNs',
    minRatio: 4,
    ours: { scenario: 'breaker-closed', library: BW, variant: 'execute, async target' },
    peers: [
      { library: 'cockatiel 4', variant: 'execute, async target' },
      { library: 'cockatiel 3', variant: 'execute, async target' },
    ],
  },
  {
    id: 'composed-vs-cockatiel',
    kind: 'ratio',
    label: 'composed pipeline overhead ≥ 50× below cockatiel `wrap`',
    metric: 'overheadNs',
    minRatio: 50,
    ours: { scenario: 'composed', library: BW, variant: 'execute, async target' },
    peers: [
      { library: 'cockatiel 4', variant: 'wrap(retry, breaker, bulkhead, timeout), async target' },
      { library: 'cockatiel 3', variant: 'wrap(retry, breaker, bulkhead, timeout), async target' },
    ],
  },
  {
    id: 'composed-vs-opossum-p-retry',
    kind: 'ratio',
    label: 'composed pipeline overhead ≥ 30× below opossum + p-retry',
    metric: 'overheadNs',
    minRatio: 30,
    ours: { scenario: 'composed', library: BW, variant: 'execute, async target' },
    peers: [
      { library: 'opossum + p-retry', variant: 'pRetry(() => breaker.fire()), async target' },
    ],
  },
  {
    id: 'open-rejection-vs-peers',
    kind: 'ratio',
    label: 'open-breaker refusal via tryExecute ≥ 100× cheaper than the peers’ throw',
    metric: 'overheadNs',
    minRatio: 100,
    // A tripped breaker (it must read the clock to know whether the break is over), as the
    // peers' are. Overheads over the bare call in the same loop: `await target()` for the
    // awaited tryExecute, `try { await target() } catch {}` for the peers' caught rejections.
    ours: { scenario: 'breaker-open', library: BW, variant: 'tryExecute, trip' },
    peers: [
      { library: 'cockatiel 4', variant: 'execute (rejects, caught), tripped by 5 failures' },
      { library: 'cockatiel 3', variant: 'execute (rejects, caught), tripped by 5 failures' },
      { library: 'opossum', variant: 'fire (rejects, caught), tripped by 1 failure' },
    ],
  },
  {
    id: 'timeout-vs-opossum-cooperative',
    kind: 'ratio',
    label: 'timeout overhead ≥ 5× below opossum’s (cooperative)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'timeout', library: BW, variant: 'execute, cooperative' },
    peers: [{ library: 'opossum', variant: 'fire, timeout 1000 (breaker included)' }],
  },
  {
    id: 'timeout-vs-opossum-aggressive',
    kind: 'ratio',
    label: 'timeout overhead ≥ 5× below opossum’s (aggressive)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'timeout', library: BW, variant: 'execute, aggressive' },
    peers: [{ library: 'opossum', variant: 'fire, timeout 1000 (breaker included)' }],
  },
  {
    id: 'rate-limiter-vs-rate-limiter-flexible',
    kind: 'ratio',
    label:
      'rate-limiter permit ≤ 1/5 of rate-limiter-flexible’s time (0 B: see the tryAcquire limit)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'rate-limiter', library: BW, variant: 'acquire()' },
    peers: [{ library: 'rate-limiter-flexible', variant: 'consume(key)' }],
  },
];

export const LIMIT_BUDGETS = [
  {
    id: 'closed-breaker',
    kind: 'limit',
    label: 'closed breaker, execute: over bare await',
    scenario: 'breaker-closed',
    variant: 'execute, async target',
    limits: { overheadNs: 30, overheadBytes: 150 },
  },
  {
    id: 'open-breaker-try-forced',
    kind: 'limit',
    label: 'open breaker (forceOpen), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, forceOpen',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
  {
    id: 'open-breaker-try-tripped',
    kind: 'limit',
    label: 'open breaker (tripped), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, trip',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
  {
    id: 'composed',
    kind: 'limit',
    label: 'composed four-policy pipeline: over bare await',
    scenario: 'composed',
    variant: 'execute, async target',
    limits: { overheadNs: 150, overheadBytes: 300 },
  },
  {
    id: 'rate-limiter-try-acquire',
    kind: 'limit',
    label: 'in-memory rate limiter, tryAcquire call',
    scenario: 'rate-limiter',
    variant: 'tryAcquire()',
    limits: { nsPerOp: 20, bytesPerOp: 0 },
  },
  {
    id: 'rate-limiter-redis-throughput',
    kind: 'limit',
    label:
      'Redis rate limiter, 100,000 keys, concurrency 100 on loopback: ≥ 50,000 decisions/s (≤ 20,000 ns per decision)',
    scenario: 'rate-limiter-redis',
    variant: 'tryAcquire(key), 100,000 keys, concurrency 100',
    limits: { nsPerOp: 20_000 },
  },
  {
    id: 'sync-breaker',
    kind: 'limit',
    label: 'sync breaker path, executeSync',
    scenario: 'breaker-closed',
    variant: 'executeSync, sync target',
    limits: { bytesPerOp: 0 },
  },
  {
    id: 'decorated-vs-direct',
    kind: 'versus',
    label: 'decorated method vs the same pipeline called directly',
    metric: 'versusNs',
    limit: 10,
    rows: [
      {
        scenario: 'composed',
        variant: 'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
      },
      { scenario: 'breaker-closed', variant: 'decorated async method (@circuitBreaker)' },
    ],
  },
  {
    id: 'metrics-on',
    kind: 'versus',
    label: 'closed breaker with latency metrics on vs metrics off',
    metric: 'versusNs',
    limit: 15,
    rows: [{ scenario: 'metrics', variant: 'execute, async target, metrics: { latency: true }' }],
  },
  {
    id: 'keyed-idle',
    kind: 'limit',
    label: 'idle keyed breaker (1,000,000 keys): heap bytes per key after GC',
    scenario: 'keyed-registry',
    variant: /^[\d,]+ idle keyed breakers/,
    limits: { bytesPerOp: 200 },
  },
  {
    id: 'keyed-churn',
    kind: 'limit',
    label:
      '10,000,000 distinct keys through a registry capped at 100,000: heap growth over the heap at 100,000 entries',
    scenario: 'keyed-registry',
    variant: /^[\d,]+ keys through a registry capped at/,
    limits: { heapGrowthPct: 10 },
  },
];

export const BUDGETS = [...PEER_BUDGETS, ...LIMIT_BUDGETS];

const UNIT = {
  overheadNs: 'ns',
  nsPerOp: 'ns',
  versusNs: 'ns',
  overheadBytes: 'B',
  bytesPerOp: 'B',
  heapGrowthPct: '%',
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
  const checks = Object.entries(b.limits).map(([metric, limit]) => {
    const value = row?.[metric];
    const measured = finite(value);
    return {
      metric,
      limit,
      unit: UNIT[metric],
      value: measured ? value : null,
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

export function checkBudgets(rows) {
  return BUDGETS.map((b) => {
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
