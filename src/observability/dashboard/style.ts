/** @internal The dashboard's stylesheet: plain, readable, light and dark. */
export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5c6475; --line: #d8dce4;
  --bg: #ffffff; --head: #f3f5f8; --ok: #1f7a3a; --bad: #b3261e; --warn: #9a6100; --off: #5c6475;
  --accent: #2a5db0; --violet: #7a3fb0; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ef; --muted: #a3abbb; --line: #343b48; --bg: #151922; --head: #1d2230;
    --ok: #5cc47c; --bad: #ff7b72; --warn: #e3b341; --off: #a3abbb; --accent: #7aa7ff; --violet: #c69cf5; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 1.5rem; font: 14px/1.4 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 1rem; margin-bottom: 1rem; }
h1 { font-size: 1.4rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
#status, #updated, #summary, #omitted, .empty { color: var(--muted); margin: 0; }
#status[data-live="true"] { color: var(--ok); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.key { white-space: pre-wrap; overflow-wrap: anywhere; max-width: 24rem; font-family: ui-monospace, monospace; }
td.name { font-weight: 600; overflow-wrap: anywhere; min-width: 8rem; }
td.kind, td.state { white-space: nowrap; }
.badge { display: inline-block; padding: 0 0.45rem; border-radius: 0.6rem; border: 1px solid currentColor; font-weight: 600; margin-right: 0.4rem; }
tr[data-state="closed"] .badge { color: var(--ok); }
tr[data-state="open"] .badge, tr[data-state="forced-open"] .badge { color: var(--bad); }
tr[data-state="half-open"] .badge { color: var(--warn); }
tr[data-state="disabled"] .badge, tr[data-state="metrics-only"] .badge { color: var(--off); }
td.trend { min-width: 200px; }
svg.spark { width: 200px; height: 40px; display: block; color: var(--accent); border-bottom: 1px solid var(--line); }
svg.spark polyline { fill: none; stroke: currentColor; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
svg.spark polygon { fill: currentColor; fill-opacity: 0.15; stroke: none; }
td.trend .caption { display: block; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; white-space: nowrap; }
th small { font-weight: 400; color: var(--muted); }
#transitions { padding-left: 1.2rem; margin: 0; }
#transitions li { margin: 0.2rem 0; }
#transitions .what { font-weight: 600; overflow-wrap: anywhere; white-space: pre-wrap; }
#transitions .to-open, #transitions .to-forced-open { color: var(--bad); }
#transitions .to-closed { color: var(--ok); }
#transitions .to-half-open { color: var(--warn); }
#transitions .detail { color: var(--muted); }
h2 small { font-weight: 400; font-size: 0.8rem; color: var(--muted); }
a { color: inherit; }
a:focus-visible, .group:focus-visible, figure.chart:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.group { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem 0.25rem; margin: 0 0 0.75rem; }
.group h3 { font-size: 1rem; margin: 0 0 0.4rem; overflow-wrap: anywhere; white-space: pre-wrap; }
.group-kind { color: var(--muted); font-weight: 400; }
.group-key { font-family: ui-monospace, monospace; font-weight: 400; }
.figures { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; align-items: flex-start; }
figure.chart { margin: 0 0 0.4rem; width: 320px; }
figure.chart figcaption { display: flex; flex-wrap: wrap; gap: 0 0.6rem; font-size: 12px; align-items: center; min-height: 1.2rem; }
.chart-name { font-weight: 600; }
.legend { display: inline-flex; flex-wrap: wrap; gap: 0 0.6rem; color: var(--muted); }
.legend .key { display: inline-flex; align-items: center; gap: 0.2rem; white-space: nowrap; }
svg.plot { display: block; overflow: visible; }
svg.plot text { font-size: 10px; fill: var(--muted); font-variant-numeric: tabular-nums; }
svg.plot .unit { font-style: italic; }
svg.plot .grid { stroke: var(--line); stroke-width: 1; }
svg.plot .axis { stroke: var(--muted); stroke-width: 1; }
.line { fill: none; stroke-width: 1.75; stroke-linejoin: round; stroke-linecap: round; }
.c-calls, .c-p50, .c-l0 { stroke: var(--accent); }
.c-refused, .c-l1 { stroke: var(--warn); stroke-dasharray: 6 3; }
.c-failed, .c-p99 { stroke: var(--bad); stroke-dasharray: 2 2; }
.c-p99 { stroke-dasharray: none; }
.c-other, .c-l2 { stroke: var(--violet); stroke-dasharray: 8 2 2 2; }
.c-l3 { stroke: var(--ok); stroke-dasharray: 1 3; }
.c-l4 { stroke: var(--muted); stroke-dasharray: 4 4; }
.seg { fill: var(--off); }
.seg[data-state="closed"] { fill: var(--ok); }
.seg[data-state="open"], .seg[data-state="forced-open"] { fill: var(--bad); }
.seg[data-state="half-open"] { fill: var(--warn); }
svg.plot .seg-label { fill: var(--bg); font-weight: 600; }
.mark { stroke: var(--fg); stroke-width: 1.5; }
.mark-head { fill: var(--fg); }
`;
