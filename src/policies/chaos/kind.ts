import { defineKind } from '../../protocol/defineKind.js';
import { Chaos, type ChaosStats } from './Chaos.js';
import { chaosSchema } from './config.js';
import { chaosKindChannel } from './diagnostics.js';
import { type ChaosCounts, chaosMetrics } from './metrics.js';
import { type ChaosOptions, type ResolvedChaosOptions, resolveChaosOptions } from './options.js';

/**
 * The chaos kind: what the registry, config data and exporters know of it. Its `/health` is
 * always `ok`: an experiment must not take an instance out of its load balancer's rotation
 * (its state, `injecting` or `off`, shows it is running).
 */
export const chaosKind = defineKind<Chaos, ResolvedChaosOptions, ChaosCounts>({
  name: 'chaos',
  label: 'chaos step',
  section: 'chaosSteps',
  policy: Chaos,
  resolve: (data) => resolveChaosOptions(data as unknown as ChaosOptions),
  config: { schema: chaosSchema, codeOnly: ['error', 'behavior', 'random'] },
  channels: [chaosKindChannel],
  metrics: chaosMetrics,
  view: (c) => ({ state: c.state, stats: c.stats() }),
  state: (c) => c.state,
  restState: 'off',
  dashboard({ stats }) {
    const s = stats as ChaosStats;
    return {
      calls: s.calls,
      trend: s.injected,
      trendLabel: 'injections per second',
      detail: `${s.strategy} at ${(s.rate * 100).toFixed(1)} %${s.enabled ? '' : ' (off)'}: ${s.injected} injected, ${s.capped} capped, ${s.active} active, ${s.realFailures} real failures`,
    };
  },
});
