/**
 * Peer rows shared by a scenario and its polluted variant. Polluted: before measuring, the
 * same policy runs the eleven pollution targets (see targets.mjs). opossum binds one action
 * per breaker, so it is polluted through eleven breakers, one per target, which share
 * opossum's internal call sites; a fresh breaker is then measured.
 */
import {
  COCKATIELS,
  ckBreaker,
  ckComposed,
  LIB,
  opBreaker,
  opComposed,
  PRETRY_OPTIONS,
  pRetry,
  shutdown,
} from './peers.mjs';
import { isOne } from './rows.mjs';
import { pollute, pollutionRounds, pollutionTargets } from './targets.mjs';

/** Runs every pollution target through its own opossum breaker, then shuts them down. */
async function polluteOpossum(make, call, rounds) {
  const breakers = pollutionTargets().map((t) => make(t));
  const calls = breakers.map((b) => () => call(b));
  await pollute((c) => c(), calls, rounds);
  for (const b of breakers) shutdown(b);
}

/**
 * Closed-breaker rows of cockatiel 4, cockatiel 3 and opossum (`timeout: false`) for each
 * `{ name, target, baseline }`.
 */
export function breakerPeerRows(targets, { polluted, quick, cleanOf }) {
  const rounds = pollutionRounds(quick);
  const out = [];
  for (const { library, ck } of COCKATIELS) {
    for (const { name, target, baseline } of targets) {
      out.push({
        library,
        variant: `execute, ${name}`,
        kind: 'async',
        baseline,
        cleanOf,
        prepare: async () => {
          const p = ckBreaker(ck);
          if (polluted) await pollute((t) => p.execute(t), pollutionTargets(), rounds);
          return () => p.execute(target);
        },
        check: isOne,
      });
    }
  }
  for (const { name, target, baseline } of targets) {
    out.push({
      library: LIB.opossum,
      variant: `fire, ${name} (timeout: false)`,
      kind: 'async',
      baseline,
      cleanOf,
      prepare: async () => {
        if (polluted) await polluteOpossum(opBreaker, (b) => b.fire(), rounds);
        const b = opBreaker(target);
        return { op: () => b.fire(), dispose: () => shutdown(b) };
      },
      check: isOne,
    });
  }
  return out;
}

/** Composed rows: cockatiel 4 and 3 `wrap`, opossum driven by p-retry. */
export function composedPeerRows(baseline, target, { polluted, quick, cleanOf }) {
  const rounds = pollutionRounds(quick);
  const out = [];
  for (const { library, ck } of COCKATIELS) {
    out.push({
      library,
      variant: 'wrap(retry, breaker, bulkhead, timeout), async target',
      kind: 'async',
      baseline,
      cleanOf,
      prepare: async () => {
        const p = ckComposed(ck);
        if (polluted) await pollute((t) => p.execute(t), pollutionTargets(), rounds);
        return () => p.execute(target);
      },
      check: isOne,
    });
  }
  out.push({
    library: LIB.opossumPRetry,
    variant: 'pRetry(() => breaker.fire()), async target',
    kind: 'async',
    baseline,
    cleanOf,
    prepare: async () => {
      if (polluted) {
        await polluteOpossum(opComposed, (b) => pRetry(() => b.fire(), PRETRY_OPTIONS), rounds);
      }
      const b = opComposed(target);
      const fire = () => b.fire();
      return { op: () => pRetry(fire, PRETRY_OPTIONS), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}
