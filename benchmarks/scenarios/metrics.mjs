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
