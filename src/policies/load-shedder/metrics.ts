import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { LoadShedder } from './LoadShedder.js';

/** Counts of one load shedder series (index of `refused`: the criticality level). */
export interface LoadShedderCounts {
  admitted: number;
  refused: number[];
  refusalRate: number;
}

const LEVEL_NAMES = ['sheddable', 'sheddable-plus', 'critical', 'critical-plus'] as const;

const declared = declareMetrics<LoadShedder, LoadShedderCounts, keyof LoadShedderCounts>({
  prefix: 'load_shedder',
  readings: {
    admitted: counter('{call}', 'Calls a load shedder let through.'),
    refused: counter('{call}', 'Calls a load shedder refused, by criticality.', {
      label: 'criticality',
      values: LEVEL_NAMES,
      array: 'refused',
    }),
    refusalRate: gauge('1', 'The share of calls a load shedder refuses now.'),
  },
  // A sum of shedders reports the highest rate among them.
  combine: { refusalRate: 'max' },
  enabled: (s) => s.metrics.enabled,
  read(c, s) {
    const stats = s.stats();
    c.admitted += stats.admitted;
    LEVEL_NAMES.forEach((level, i) => {
      c.refused[i]! += stats.refused[level];
    });
    c.refusalRate = Math.max(c.refusalRate, stats.refusalRate);
  },
});

/** The metric families of load shedders. */
export const loadShedderFamilies = declared.families;
/** @internal How load shedders report into their families. */
export const loadShedderMetrics = declared.metrics;
