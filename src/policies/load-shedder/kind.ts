import { defineKind } from '../../protocol/defineKind.js';
import { rejectedKindChannel, rejectedSpanEvent } from '../shared/rejectedEvent.js';
import { loadShedderSchema } from './config.js';
import { LoadShedder, type LoadShedderStats } from './LoadShedder.js';
import { type LoadShedderCounts, loadShedderMetrics } from './metrics.js';
import {
  type LoadShedderOptions,
  type ResolvedLoadShedderOptions,
  resolveLoadShedderOptions,
} from './options.js';

/** The load shedder kind: what the registry, config data and exporters know of it. */
export const loadShedderKind = defineKind<
  LoadShedder,
  ResolvedLoadShedderOptions,
  LoadShedderCounts
>({
  name: 'loadShedder',
  label: 'load shedder',
  section: 'loadShedders',
  policy: LoadShedder,
  resolve: (data) => resolveLoadShedderOptions(data as LoadShedderOptions),
  config: { schema: loadShedderSchema, codeOnly: ['handle', 'handleResult', 'signal', 'random'] },
  metrics: loadShedderMetrics,
  channels: [rejectedKindChannel],
  spanEvents: [rejectedSpanEvent('loadShedder', ['load-shed'])],
  dashboard({ stats }) {
    const s = stats as LoadShedderStats;
    const r = s.refused;
    return {
      calls: s.admitted,
      rejected: r['critical-plus'] + r.critical + r['sheddable-plus'] + r.sheddable,
      detail: `refusing ${(s.refusalRate * 100).toFixed(1)} %: ${s.accepts} of ${s.requests} recent requests accepted`,
    };
  },
});
