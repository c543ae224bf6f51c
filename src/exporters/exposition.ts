import type { MetricFamily, MetricLabels } from './families.js';

/**
 * Renders metric families in the Prometheus text exposition format (version 0.0.4): a HELP
 * and a TYPE line per family, then one line per series; histograms as `_bucket` (with `le`,
 * ending at `+Inf`), `_sum` and `_count`. Label values are escaped as the format requires
 * (backslash, double quote, line feed), so untrusted names and keys cannot forge lines.
 *
 * @example
 * ```ts
 * res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
 * res.end(prometheusText(collectMetrics(registry)));
 * ```
 */
export function prometheusText(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    if (f.type === 'histogram') {
      for (const s of f.samples) {
        f.bounds.forEach((bound, i) => {
          out.push(
            `${f.name}_bucket${labels(s.labels, formatNumber(bound))} ${formatNumber(s.buckets[i]!)}`,
          );
        });
        out.push(`${f.name}_bucket${labels(s.labels, '+Inf')} ${formatNumber(s.count)}`);
        out.push(`${f.name}_sum${labels(s.labels)} ${formatNumber(s.sum)}`);
        out.push(`${f.name}_count${labels(s.labels)} ${formatNumber(s.count)}`);
      }
    } else {
      for (const s of f.samples) out.push(`${f.name}${labels(s.labels)} ${formatNumber(s.value)}`);
    }
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

function labels(set: MetricLabels, le?: string): string {
  const parts = Object.keys(set).map((k) => `${k}="${escapeLabel(set[k]!)}"`);
  if (le !== undefined) parts.push(`le="${le}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

const NEEDS_ESCAPE = /[\\"\n]/;

/** @internal Escapes a label value: `\` `"` and line feeds. */
export function escapeLabel(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(n);
}
