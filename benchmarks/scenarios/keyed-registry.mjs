/**
 * Heap held by keyed circuit breakers (`registry.keyedCircuitBreaker('api', key)`, default
 * options: a count window of 100 calls), after full collections: 1,000,000 idle keys that
 * each made one call, and 10,000,000 distinct keys pushed through a registry capped at
 * 100,000 keys (the least recently used is evicted). The bare rows hold the same keys in a
 * plain Map (key -> {}), the floor of any keyed store. Measured once per allocation run, in a
 * process started with --expose-gc only; the rows time themselves (ns per key pushed).
 */
// Not peers.mjs: the peers' code would sit in the heap, and V8 dropping its unused bytecode
// during a row would read as the row freeing memory.
import { settleHeap } from '../lib/measure.mjs';
import { keyedCall, keyedRegistry } from '../lib/pipelines.mjs';
import { bytes, ns } from '../lib/prose.mjs';

const BW = 'breakwater';

export const title = 'Keyed circuit breakers: heap per idle key, and a capped registry under churn';
export const order = 12;
/** Measured by its own rows, in allocation runs only (see measure.mjs, kind 'memory'). */
export const memory = true;

const count = (n) => n.toLocaleString('en-US');

/**
 * Keys in a Map, each with an empty object; past `cap` keys the oldest is evicted. The order
 * of the keys is kept in a ring made up front (not measured): finding the oldest through the
 * Map's own iterator would walk over every deleted entry not yet compacted, on every eviction.
 */
function bareStore(cap) {
  const map = new Map();
  const ring = new Array(cap).fill(undefined);
  let next = 0;
  return {
    add(key) {
      if (map.size >= cap) map.delete(ring[next]);
      ring[next] = key;
      next = next + 1 === cap ? 0 : next + 1;
      map.set(key, {});
    },
    held: () => map.size,
  };
}

/** A registry keeping at most `cap` keys; each key makes one call through its own breaker. */
function registryStore(cap) {
  const registry = keyedRegistry(cap);
  return {
    add(key) {
      keyedCall(registry, key);
    },
    held: () => registry.snapshot().instances.length,
  };
}

const elapsedNs = (t0) => Number(process.hrtime.bigint() - t0);

/** `keys` keys added once and all kept: ns and heap bytes per key. */
async function idle(makeStore, keys) {
  const store = makeStore(keys + 1);
  // Structures made on first use (the keyed group) are not a per-key cost.
  store.add('warm-up');
  const before = await settleHeap();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < keys; i++) store.add(`host-${i}`);
  const ns = elapsedNs(t0) / keys;
  const bytes = ((await settleHeap()) - before) / keys;
  return {
    nsPerOp: ns,
    nsMin: ns,
    nsMax: ns,
    bytesPerOp: bytes,
    bytesMin: bytes,
    bytesMax: bytes,
    calls: keys,
    memory: { held: store.held() - 1 },
  };
}

/**
 * `keys` distinct keys pushed through a store capped at `cap`: the heap once `cap` keys are
 * held, after the second round of `cap` keys, and at the end. Bytes per op are the heap at the
 * end per key held; `heapGrowthPct` compares the end with the heap at the cap.
 */
async function churn(makeStore, keys, cap) {
  const store = makeStore(cap);
  const base = await settleHeap();
  let ns = 0;
  let i = 0;
  const push = async (to) => {
    const t0 = process.hrtime.bigint();
    for (; i < to; i++) store.add(`host-${i}`);
    ns += elapsedNs(t0);
    return (await settleHeap()) - base;
  };
  const atCap = await push(cap);
  // A Map grows its table once, when deletions start; the second round shows the steady state.
  const afterTwoRounds = await push(Math.min(keys, 2 * cap));
  const atEnd = await push(keys);
  const bytes = atEnd / cap;
  return {
    nsPerOp: ns / keys,
    nsMin: ns / keys,
    nsMax: ns / keys,
    bytesPerOp: bytes,
    bytesMin: bytes,
    bytesMax: bytes,
    calls: keys,
    memory: {
      held: store.held(),
      bytesAtCap: atCap,
      bytesAfterTwoRounds: afterTwoRounds,
      bytesAtEnd: atEnd,
      heapGrowthPct: (atEnd / atCap - 1) * 100,
      heapGrowthAfterTwoRoundsPct: (atEnd / afterTwoRounds - 1) * 100,
    },
  };
}

export function rows({ quick }) {
  const idleKeys = quick ? 10_000 : 1_000_000;
  const churnKeys = quick ? 100_000 : 10_000_000;
  const cap = quick ? 1_000 : 100_000;
  const BARE_IDLE = `${count(idleKeys)} keys in a Map (key → {})`;
  const BARE_CHURN = `${count(churnKeys)} keys through a Map capped at ${count(cap)}`;
  const holds = (n) => (f) => f.memory.held === n && f.bytesPerOp > 0 && f.nsPerOp > 0;
  return [
    {
      library: 'bare',
      variant: BARE_IDLE,
      kind: 'memory',
      measure: () => idle(bareStore, idleKeys),
      check: holds(idleKeys),
    },
    {
      library: BW,
      variant: `${count(idleKeys)} idle keyed breakers (one call each)`,
      kind: 'memory',
      baseline: BARE_IDLE,
      measure: () => idle(registryStore, idleKeys),
      check: holds(idleKeys),
    },
    {
      library: 'bare',
      variant: BARE_CHURN,
      kind: 'memory',
      measure: () => churn(bareStore, churnKeys, cap),
      check: holds(cap),
    },
    {
      library: BW,
      variant: `${count(churnKeys)} keys through a registry capped at ${count(cap)}`,
      kind: 'memory',
      baseline: BARE_CHURN,
      measure: () => churn(registryStore, churnKeys, cap),
      check: holds(cap),
    },
  ];
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'keyed-idle',
    rank: 17,
    kind: 'limit',
    label: 'idle keyed breaker (1,000,000 keys): heap bytes per key after GC',
    scenario: 'keyed-registry',
    variant: /^[\d,]+ idle keyed breakers/,
    limits: { bytesPerOp: 200 },
  },
  {
    id: 'keyed-churn',
    rank: 18,
    kind: 'limit',
    label:
      '10,000,000 distinct keys through a registry capped at 100,000: heap growth over the heap at 100,000 entries',
    scenario: 'keyed-registry',
    variant: /^[\d,]+ keys through a registry capped at/,
    limits: { heapGrowthPct: 10 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report }) {
  const K = 'keyed-registry';
  const keyed = report.rows.filter((r) => r.scenario === K);
  const idle = keyed.find((r) => r.library === 'breakwater' && r.variant.includes('idle'));
  const churn = keyed.find((r) => r.library === 'breakwater' && r.variant.includes('registry'));
  if (idle && churn) {
    const idleMap = keyed.find((r) => r.variant === idle.baseline);
    const churnMap = keyed.find((r) => r.variant === churn.baseline);
    const mb = (x) => `${(x / 2 ** 20).toFixed(1)} MiB`;
    const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
    return (
      `Keyed breakers (\`registry.keyedCircuitBreaker('api', key)\`, default count window of 100): ` +
      `${idle.variant} keep ${bytes(idle.bytesPerOp)} each after GC` +
      (idleMap
        ? ` (a Map of as many keys to empty objects keeps ${bytes(idleMap.bytesPerOp)} per key)`
        : '') +
      `, made and called at ${ns(idle.nsPerOp)} per key. ${churn.variant}: the heap holds ` +
      `${mb(churn.bytesAtCap)} once the cap is reached, ${mb(churn.bytesAfterTwoRounds)} after the second round ` +
      `of keys and ${mb(churn.bytesAtEnd)} at the end (${pct(churn.heapGrowthPct)} over the cap, ` +
      `${pct(churn.heapGrowthAfterTwoRoundsPct)} over the second round), at ${ns(churn.nsPerOp)} per key` +
      (churnMap
        ? `; a plain Map capped the same way grows ${pct(churnMap.heapGrowthPct)} over its cap and ` +
          `${pct(churnMap.heapGrowthAfterTwoRoundsPct)} over its second round: ` +
          `${mb(churnMap.bytesAfterTwoRounds - churnMap.bytesAtCap)} between the cap and the second round, against ` +
          `the registry's ${mb(churn.bytesAfterTwoRounds - churn.bytesAtCap)} (a Map doubles its table once when deletions start, then stays flat)`
        : '') +
      '.'
    );
  }
}
