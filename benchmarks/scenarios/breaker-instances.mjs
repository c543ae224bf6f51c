/**
 * Making 100,000 circuit breakers, all kept alive: time per instance, and bytes each instance
 * keeps alive after a full GC. breakwater (configured like the other rows, and with every
 * option at its default), cockatiel 4 and 3, opossum (its two 1 s intervals per breaker
 * included; they are cleared with `shutdown()` after each round, outside the measurement).
 */
import { COCKATIELS, ckBreaker, LIB, opBreaker, shutdown } from '../lib/peers.mjs';
import { keyedBreakerRegistry, newBreaker, newDefaultBreaker } from '../lib/pipelines.mjs';
import { bytes, ns } from '../lib/prose.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Creating 100,000 circuit breakers';
export const order = 11;

/** The keyed row's baseline: making the new key's string. */
const NEW_KEY = 'a new key string (host-N)';
/** The keyed row's variant. */
const KEYED_VARIANT = 'registry.keyedCircuitBreaker(api, new key), 100,000 keys at most';
const CONSECUTIVE_VARIANT = 'new CircuitBreaker (consecutive 5)';

export function rows({ quick }) {
  const n = quick ? 1_000 : 100_000;
  const count = n.toLocaleString('en-US');
  const BARE = `${count} × {} (empty object)`;
  const instances = (library, variant, make, check, disposeInstance) => ({
    library,
    variant: `${count} × ${variant}`,
    kind: 'instances',
    baseline: BARE,
    opsPerCall: n,
    prepare: () => make,
    check: (o) => o.ok && check(o.value),
    disposeInstance,
  });
  const out = [
    {
      library: 'bare',
      variant: BARE,
      kind: 'instances',
      opsPerCall: n,
      prepare: () => () => ({}),
      check: (o) => o.ok && typeof o.value === 'object',
    },
    instances(LIB.breakwater, CONSECUTIVE_VARIANT, newBreaker, (b) => b.state === 'closed'),
    instances(
      LIB.breakwater,
      'new CircuitBreaker() (defaults: count window of 100)',
      newDefaultBreaker,
      (b) => b.state === 'closed',
    ),
  ];
  out.push({
    library: 'bare',
    variant: NEW_KEY,
    kind: 'sync',
    prepare: () => {
      let next = 0;
      return () => `host-${next++}`;
    },
    check: (o) => o.ok && typeof o.value === 'string',
  });
  out.push({
    library: LIB.breakwater,
    variant: KEYED_VARIANT,
    baseline: NEW_KEY,
    // Not kept: the registry keeps a bounded number of live instances per name and stores the
    // state of the others, which a caller holding every instance would defeat.
    kind: 'sync',
    // Capped at 100,000 keys: once full, each new key also evicts the least recently used.
    prepare: () => {
      const registry = keyedBreakerRegistry(100_000);
      let next = 0;
      return () => registry.keyedCircuitBreaker('api', `host-${next++}`);
    },
    check: (o) => o.ok && o.value.state === 'closed',
  });
  for (const { library, ck } of COCKATIELS) {
    out.push(
      instances(
        library,
        'circuitBreaker (ConsecutiveBreaker(5))',
        () => ckBreaker(ck),
        (b) => b.state === ck.CircuitState.Closed,
      ),
    );
  }
  out.push(
    instances(
      LIB.opossum,
      'new CircuitBreaker (timeout: false)',
      () => opBreaker(asyncTarget),
      (b) => b.closed === true,
      shutdown,
    ),
  );
  return out;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'breaker-creation',
    rank: 34,
    kind: 'limit',
    label: 'creating a circuit breaker (consecutive 5), kept alive: time and bytes per breaker',
    scenario: 'breaker-instances',
    variant: new RegExp(`^[\\d,]+ × ${escapeRegExp(CONSECUTIVE_VARIANT)}$`),
    limits: { nsPerOp: 2000, bytesPerOp: 1024 },
  },
  {
    id: 'registry-new-key',
    rank: 35,
    kind: 'limit',
    label: 'a new key in the registry (its breaker made, the least recently used key evicted)',
    scenario: 'breaker-instances',
    variant: KEYED_VARIANT,
    limits: { nsPerOp: 3000 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report }) {
  const inst = report.rows.filter(
    (r) =>
      r.scenario === 'breaker-instances' && r.library !== 'bare' && r.variant !== KEYED_VARIANT,
  );
  const keyed = report.rows.find(
    (r) => r.scenario === 'breaker-instances' && r.variant === KEYED_VARIANT,
  );
  if (inst.length > 0) {
    const n = inst[0].opsPerCall;
    return (
      `Making ${n.toLocaleString('en-US')} breakers (time per breaker, bytes each keeps alive): ` +
      inst
        .map(
          (r) =>
            `${r.library} ${r.variant.replace(/^[\d,]+ × /, '')} ${ns(r.nsPerOp)}, ${bytes(r.bytesPerOp)}`,
        )
        .join('; ') +
      '. opossum also arms two 1 s intervals per breaker.' +
      (keyed
        ? ` A new key in a registry holding its 100,000-key cap (the key's breaker made from ` +
          `the name's config, the least recently used key evicted) takes ${ns(keyed.nsPerOp)}.`
        : '')
    );
  }
}
