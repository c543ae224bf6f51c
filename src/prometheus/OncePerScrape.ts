import type { MetricFamily } from '../exporters/families.js';

/**
 * @internal Collects a registry's metrics at most once per scrape. prom-client asks each
 * registered metric for its values one after another in the same synchronous turn
 * (`metrics()`, `getMetricsAsJSON()`), so the first family asked for collects them all and the
 * collection is dropped once that turn's microtasks run: the others read the same figures and
 * nothing is kept between scrapes.
 */
export class OncePerScrape {
  private families: Map<string, MetricFamily> | undefined;

  constructor(private readonly collect: () => readonly MetricFamily[]) {}

  family(name: string): MetricFamily | undefined {
    if (this.families === undefined) {
      this.families = new Map(this.collect().map((f) => [f.name, f]));
      queueMicrotask(() => {
        this.families = undefined;
      });
    }
    return this.families.get(name);
  }
}
