/** @internal The dashboard's stylesheet: plain, readable, light and dark. */
export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5c6475; --line: #d8dce4;
  --bg: #ffffff; --head: #f3f5f8; --ok: #1f7a3a; --bad: #b3261e; --warn: #9a6100; --off: #5c6475;
  --accent: #2a5db0; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ef; --muted: #a3abbb; --line: #343b48; --bg: #151922; --head: #1d2230;
    --ok: #5cc47c; --bad: #ff7b72; --warn: #e3b341; --off: #a3abbb; --accent: #7aa7ff; }
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
`;
