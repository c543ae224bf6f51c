import { OptionsError } from '../../errors/OptionsError.js';
import {
  configSchema,
  type InstanceHealth,
  POLICY_KIND,
  type PolicyKindDescriptor,
} from '../../protocol/kind.js';
import { type SharedSignalsCounts, sharedSignalsMetrics } from './metrics.js';
import type { SharedSignalsOptions } from './options.js';
import { RedisBreakerSignals, type SharedSignalsStats } from './RedisBreakerSignals.js';

const IN_CODE =
  'shared signals are attached in code to a breaker with their client (`sharedSignals(breaker, { client, ... })`) and added with `registry.register(name, signals)`';

/** The states of shared signals: what the instance knows of the shared state. */
const CLOSED = 'closed';
const OPEN = 'open';
/** Redis does not answer: the breaker decides alone. */
const LOCAL = 'local-only';

function stateOf(signals: RedisBreakerSignals): string {
  if (!signals.storeAvailable) return LOCAL;
  return signals.sharedOpen ? OPEN : CLOSED;
}

/**
 * The kind of shared breaker signals: registered signals show in snapshots, `/health` (state
 * `closed`, `open` (a quorum holds the breakers open) or `local-only` (Redis does not answer:
 * degraded, never a reason for 503; the breaker's own entry says whether it lets calls
 * through), metrics and the dashboard. Instances come from code only: config data cannot give
 * a client. Signals carry their kind, so a registry learns it from the first one it is handed.
 *
 * @example
 * ```ts
 * registry.register('payments', breaker);
 * registry.register('payments-shared', sharedSignals(breaker, { client, quorum: 3 }));
 * ```
 */
export const sharedSignalsKind: PolicyKindDescriptor<
  RedisBreakerSignals,
  SharedSignalsOptions,
  SharedSignalsCounts
> = {
  name: 'sharedSignals',
  label: 'shared breaker signals',
  section: 'sharedBreakerSignals',
  is: (value): value is RedisBreakerSignals => value instanceof RedisBreakerSignals,
  create() {
    throw new OptionsError('client', undefined, IN_CODE);
  },
  resolve() {
    throw new OptionsError('client', undefined, IN_CODE);
  },
  reconfigure: () => () => {},
  dispose: (signals) => signals.dispose(),
  view: (signals) => ({ state: stateOf(signals), stats: signals.stats() }),
  state: stateOf,
  restState: CLOSED,
  health: (state): InstanceHealth => (state === LOCAL ? 'degraded' : 'ok'),
  config: {
    schema: configSchema([]),
    codeOnly: ['client'],
    check() {},
    missing: () => ({ option: 'client', message: `is required: ${IN_CODE}` }),
  },
  metrics: sharedSignalsMetrics,
  dashboard({ state, stats }) {
    const s = stats as SharedSignalsStats;
    const what =
      state === LOCAL
        ? 'Redis away: the breaker decides alone'
        : state === OPEN
          ? `shared open for ${Math.ceil(s.sharedOpenRemaining)} ms more`
          : 'shared state closed';
    return {
      trend: s.roundTrips,
      trendLabel: 'Redis round trips per second',
      detail: `${what}, ${s.reports} reports, ${s.heldOpen} held open, ${s.leasesGranted} probe leases, ${s.roundTrips} round trips`,
    };
  },
};

Object.defineProperty(RedisBreakerSignals.prototype, POLICY_KIND, { value: sharedSignalsKind });
