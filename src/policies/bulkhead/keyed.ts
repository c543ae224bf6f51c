import type { InstanceView, KeyedGroup, KeyedInstancesView } from '../../protocol/kind.js';
import { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import { type Bulkhead, type BulkheadStats, bulkheadFromResolved } from './Bulkhead.js';
import { type BulkheadCounts, bulkheadMetrics } from './metrics.js';
import type { ResolvedBulkheadOptions } from './options.js';

/**
 * @internal The keyed bulkheads of one registry name. An idle bulkhead holds nothing, so
 * shelving keeps no numbers.
 */
export class BulkheadGroup
  implements KeyedGroup<Bulkhead, ResolvedBulkheadOptions, BulkheadCounts>
{
  readonly stride = 0;
  instances!: KeyedInstancesView<Bulkhead>;
  /** Counts of keys dropped or shelved; `maxConcurrent` is the name's limit. */
  readonly retired: BulkheadCounts = bulkheadMetrics.counts();
  readonly latency: LatencyHistogram | undefined;

  constructor(
    private readonly name: string,
    public options: ResolvedBulkheadOptions,
  ) {
    this.latency = options.metrics.latencyEvery === 0 ? undefined : new LatencyHistogram();
    this.retired.maxConcurrent = options.maxConcurrent;
    this.retired.codel = options.queue === 'codel';
  }

  get metricsEnabled(): boolean {
    return this.options.metrics.enabled;
  }

  create(key: string): Bulkhead {
    return bulkheadFromResolved(this.options, `${this.name}:${key}`, this.latency);
  }

  revive(): void {}

  shelve(bulkhead: Bulkhead): boolean {
    if (this.isProtected(bulkhead) || bulkhead.rejected.size !== 0) return false;
    this.retire(bulkhead);
    bulkhead.dispose();
    return true;
  }

  retire(bulkhead: Bulkhead | undefined): void {
    if (bulkhead === undefined) return;
    const { retired } = this;
    const limit = retired.maxConcurrent;
    bulkhead.addCounts(retired);
    // What it held goes with it: only its counters stay in the name's totals.
    retired.inFlight = 0;
    retired.codel ||= bulkhead.queueDiscipline === 'codel';
    retired.queueLength = 0;
    retired.maxConcurrent = limit;
  }

  isProtected(bulkhead: Bulkhead): boolean {
    return bulkhead.inFlight !== 0 || bulkhead.queueLength !== 0;
  }

  dispose(bulkhead: Bulkhead): void {
    bulkhead.dispose();
  }

  check(bulkhead: Bulkhead, options: ResolvedBulkheadOptions): void {
    bulkhead.checkOptions(options, bulkhead.name);
  }

  apply(options: ResolvedBulkheadOptions, keep: readonly Bulkhead[]): void {
    this.options = options;
    this.retired.maxConcurrent = options.maxConcurrent;
    this.retired.codel ||= options.queue === 'codel';
    for (const b of keep) b.applyOptions(options);
  }

  view(bulkhead: Bulkhead | undefined): InstanceView {
    if (bulkhead !== undefined) return { stats: bulkhead.stats() };
    const stats: BulkheadStats = {
      inFlight: 0,
      queueLength: 0,
      maxConcurrent: this.options.maxConcurrent,
      admitted: 0,
      rejectionsByReason: { full: 0, queueTimeout: 0, codel: 0 },
      queue: this.options.queue,
      dropping: false,
    };
    return { stats };
  }
}
