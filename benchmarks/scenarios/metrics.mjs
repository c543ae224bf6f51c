/**
 * What observability costs on the closed-breaker path (the breaker of breaker-closed.mjs):
 * metrics off (`metrics: false`) against latency metrics on (`metrics: { latency: true }`:
 * one call in 16 timed on the system clock) and against a `node:diagnostics_channel`
 * subscriber on every breakwater channel (the happy path publishes nothing; a subscriber
 * must not slow it down). Each row is timed in alternating batches with the metrics-off row
 * in one process. breakwater only: the peers have no such switch.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { CircuitBreaker, diagnosticsChannels, pipeline } from '../lib/breakwater.mjs';
import { LIB } from '../lib/peers.mjs';
import { bytes, ns, plus } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Observability on the closed-breaker path';
export const order = 12;

export const METRICS_OFF = 'execute, async target, metrics: false';

const breaker = (metrics) =>
  pipeline(
    new CircuitBreaker({
      window: { kind: 'consecutive', threshold: 5 },
      breakDuration: 10_000,
      metrics,
    }),
  );

export function rows() {
  const row = (variant, metrics, extra) => ({
    library: LIB.breakwater,
    variant,
    kind: 'async',
    baseline: BARE_ASYNC,
    check: isOne,
    prepare: () => {
      const p = breaker(metrics);
      return () => p.execute(asyncTarget);
    },
    ...extra,
  });
  const out = [bareAsync(), row(METRICS_OFF, false)];
  // An older build without metrics options or channels has only the row above.
  if (diagnosticsChannels === undefined) return out;
  out.push(
    row(
      'execute, async target, metrics: { latency: true }',
      { latency: true },
      { versus: METRICS_OFF },
    ),
    row('execute, async target, a diagnostics_channel subscriber on every channel', false, {
      versus: METRICS_OFF,
      prepare: () => {
        const p = breaker(false);
        const listener = () => {};
        const names = Object.values(diagnosticsChannels);
        for (const name of names) subscribe(name, listener);
        return {
          op: () => p.execute(asyncTarget),
          dispose: () => {
            for (const name of names) unsubscribe(name, listener);
          },
        };
      },
    }),
  );
  return out;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'metrics-on',
    rank: 16,
    kind: 'versus',
    label: 'closed breaker with latency metrics on vs metrics off',
    metric: 'versusNs',
    limit: 15,
    rows: [{ scenario: 'metrics', variant: 'execute, async target, metrics: { latency: true }' }],
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report, get }) {
  const M = 'metrics';
  const off = get(M, 'breakwater', 'execute, async target, metrics: false');
  const latency = get(M, 'breakwater', 'execute, async target, metrics: { latency: true }');
  const subscribed = report.rows.find(
    (r) => r.scenario === M && r.library === 'breakwater' && r.variant.includes('diagnostics'),
  );
  if (off && latency && subscribed) {
    return (
      `Observability on the closed breaker: with latency metrics on (one call in 16 timed, so two ` +
      `clock reads and a histogram increment every 16th call) a call costs ` +
      `${plus(latency.versusNs, ns)} and ${plus(latency.versusBytes, bytes)} over the same breaker ` +
      `with \`metrics: false\` (timed in alternating batches in one process); with a ` +
      `\`diagnostics_channel\` subscriber on every breakwater channel, ${plus(subscribed.versusNs, ns)}: ` +
      'the happy path publishes nothing, and a channel nobody subscribes to costs one property read.'
    );
  }
}
