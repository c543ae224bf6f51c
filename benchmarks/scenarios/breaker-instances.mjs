/**
 * Making 100,000 circuit breakers, all kept alive: time per instance, and bytes each instance
 * keeps alive after a full GC. breakwater (configured like the other rows, and with every
 * option at its default), cockatiel 4 and 3, opossum (its two 1 s intervals per breaker
 * included; they are cleared with `shutdown()` after each round, outside the measurement).
 */
import { COCKATIELS, ckBreaker, LIB, opBreaker, shutdown } from '../lib/peers.mjs';
import { newBreaker, newDefaultBreaker } from '../lib/pipelines.mjs';
import { bytes, ns } from '../lib/prose.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Creating 100,000 circuit breakers';
export const order = 11;

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
    instances(
      LIB.breakwater,
      'new CircuitBreaker (consecutive 5)',
      newBreaker,
      (b) => b.state === 'closed',
    ),
    instances(
      LIB.breakwater,
      'new CircuitBreaker() (defaults: count window of 100)',
      newDefaultBreaker,
      (b) => b.state === 'closed',
    ),
  ];
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

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report }) {
  const inst = report.rows.filter(
    (r) => r.scenario === 'breaker-instances' && r.library !== 'bare',
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
      '. opossum also arms two 1 s intervals per breaker.'
    );
  }
}
