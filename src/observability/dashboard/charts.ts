/**
 * @internal The part of the dashboard's script that draws: a chart is a `<figure>` (focusable,
 * named by its caption, with a legend) holding an inline SVG whose accessible name says in
 * words what it shows now. Line charts plot series over the time axis of their instance; the
 * state band draws one segment per state and a mark per transition. Inlined into the script's
 * function, it uses the helpers declared there (`SVG`, `fmtDuration`, `clock`).
 */
export const CHARTS_SCRIPT = String.raw`
  /** A chart's size in px (the SVG is drawn at that size: its text is never stretched). */
  const CW = 320;
  const CH = 112;
  const BAND_H = 52;
  const PAD = { l: 44, r: 10, t: 10, b: 20 };
  /** At least this much time on the axis, so the first points do not fill a chart alone. */
  const MIN_SPAN = 10000;

  function svgEl(name, attrs) {
    const e = document.createElementNS(SVG, name);
    if (attrs) for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function svgText(x, y, text, cls, anchor) {
    const t = svgEl('text', { x: x.toFixed(1), y: y.toFixed(1), class: cls, 'text-anchor': anchor || 'start' });
    t.textContent = text;
    return t;
  }

  function makeFigure(kind, caption, height) {
    const fig = document.createElement('figure');
    fig.className = 'chart';
    fig.dataset.chart = kind;
    fig.tabIndex = 0;
    fig.hidden = true;
    const cap = document.createElement('figcaption');
    const name = document.createElement('span');
    name.className = 'chart-name';
    name.textContent = caption;
    const legend = document.createElement('span');
    legend.className = 'legend';
    cap.append(name, legend);
    const svg = svgEl('svg', { class: 'plot', role: 'img', width: CW, height, viewBox: '0 0 ' + CW + ' ' + height });
    const title = svgEl('title');
    const body = svgEl('g');
    svg.append(title, body);
    fig.append(cap, svg);
    return { fig, name, legend, svg, title, body, height, legendKey: '' };
  }

  /** The time axis of an instance: from its oldest point (at least MIN_SPAN, at most the window) to now. */
  function timeAxis(h, now) {
    const first = h.points.length > 0 ? h.points[0].at : now;
    return { t0: now - Math.min(WINDOW_MS, Math.max(MIN_SPAN, now - first)), t1: now };
  }

  const xOf = (axis, t) => PAD.l + ((t - axis.t0) / (axis.t1 - axis.t0)) * (CW - PAD.l - PAD.r);

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    const f = v / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  function fmtTick(v) {
    if (v >= 10000) return Math.round(v / 1000) + 'k';
    if (v >= 1000) return (v / 1000).toFixed(1) + 'k';
    return Number.isInteger(v) ? String(v) : v < 1 ? v.toFixed(2) : v.toFixed(1);
  }

  function timeLabels(g, axis, y) {
    g.append(svgText(PAD.l, y, '\u2212' + fmtDuration(axis.t1 - axis.t0), 'tick', 'start'), svgText(CW - PAD.r, y, 'now', 'tick', 'end'));
  }

  function setLegend(chart, entries) {
    const key = entries.map((e) => e.cls + ':' + e.name).join('|');
    if (key === chart.legendKey) return;
    chart.legendKey = key;
    chart.legend.replaceChildren(
      ...entries.map((e) => {
        const item = document.createElement('span');
        item.className = 'key';
        item.dataset.series = e.name;
        const swatch = svgEl('svg', { class: 'swatch', width: 18, height: 10, 'aria-hidden': 'true' });
        swatch.append(e.band ? svgEl('rect', { x: 1, y: 1, width: 16, height: 8, class: 'seg', 'data-state': e.name }) : svgEl('line', { x1: 1, y1: 5, x2: 17, y2: 5, class: 'line ' + e.cls }));
        item.append(swatch, e.name);
        return item;
      }),
    );
  }

  function describe(chart, text) {
    chart.svg.setAttribute('aria-label', text);
    chart.title.textContent = text;
    chart.fig.hidden = false;
  }

  /**
   * Draws the series ({ name, cls, value(point), fmt }) of the points on the axis, one path each.
   * Points closer than a pixel share it, at their highest value, so a short spike still shows;
   * a point without a value breaks the line.
   */
  function drawLines(chart, points, axis, series, unit, caption) {
    const shown = points.filter((p) => p.at >= axis.t0);
    let peak = 0;
    for (const p of shown) for (const s of series) {
      const v = s.value(p);
      if (v !== undefined && v > peak) peak = v;
    }
    const top = niceMax(peak);
    const bottom = chart.height - PAD.b;
    const yOf = (v) => bottom - (v / top) * (bottom - PAD.t);
    const g = svgEl('g');
    for (const v of [0, top / 2, top]) {
      const y = yOf(v);
      g.append(svgEl('line', { x1: PAD.l, x2: CW - PAD.r, y1: y.toFixed(1), y2: y.toFixed(1), class: v === 0 ? 'axis' : 'grid' }));
      g.append(svgText(PAD.l - 4, y + 4, fmtTick(v), 'tick', 'end'));
    }
    g.append(svgText(2, PAD.t + 4, unit, 'unit', 'start'));
    timeLabels(g, axis, chart.height - 5);
    const facts = [];
    for (const s of series) {
      let d = '';
      let col;
      let high;
      let pen = false;
      const flush = () => {
        if (col === undefined) return;
        d += (pen ? 'L' : 'M') + col + ',' + yOf(high).toFixed(1);
        pen = true;
        col = undefined;
      };
      let last;
      let most;
      for (const p of shown) {
        const v = s.value(p);
        if (v === undefined) {
          flush();
          pen = false;
          continue;
        }
        last = v;
        most = most === undefined || v > most ? v : most;
        const c = Math.round(xOf(axis, p.at));
        if (c === col) high = Math.max(high, v);
        else {
          flush();
          col = c;
          high = v;
        }
      }
      flush();
      const path = svgEl('path', { d: d || 'M0,0', class: 'line ' + s.cls });
      path.dataset.series = s.name;
      if (d === '') path.setAttribute('visibility', 'hidden');
      g.append(path);
      facts.push(s.name + ' ' + (last === undefined ? 'no data' : 'now ' + s.fmt(last) + ', peak ' + s.fmt(most)));
    }
    chart.body.replaceWith(g);
    chart.body = g;
    setLegend(chart, series);
    describe(chart, caption + ' over the last ' + fmtDuration(axis.t1 - axis.t0) + ': ' + facts.join('; '));
  }

  /** Draws the state band: a segment per state held, a mark per transition, and says how long each state lasted. */
  function drawBand(chart, h, axis) {
    const g = svgEl('g');
    const top = PAD.t;
    const height = chart.height - PAD.t - PAD.b;
    const totals = new Map();
    const seen = [];
    h.segments.forEach((s, k) => {
      const next = h.segments[k + 1];
      const a = Math.max(s.from, axis.t0);
      const b = Math.min(next === undefined ? axis.t1 : next.from, axis.t1);
      if (b < axis.t0 || b < a) return;
      totals.set(s.state, (totals.get(s.state) || 0) + (b - a));
      if (!seen.includes(s.state)) seen.push(s.state);
      const x0 = xOf(axis, a);
      // Two px at least: a state held for a moment (a half-open probe) still shows.
      const w = Math.max(2, xOf(axis, b) - x0);
      const rect = svgEl('rect', { x: x0.toFixed(1), y: top, width: w.toFixed(1), height, class: 'seg' });
      rect.dataset.state = s.state;
      const tip = svgEl('title');
      tip.textContent = s.state + ' from ' + clock(s.from) + (next === undefined ? '' : ' to ' + clock(next.from));
      rect.append(tip);
      g.append(rect);
      if (w > 8 * s.state.length + 8) g.append(svgText(x0 + w / 2, top + height / 2 + 4, s.state, 'seg-label', 'middle'));
    });
    const marks = h.marks.filter((m) => m.at >= axis.t0);
    for (const m of marks) {
      const x = xOf(axis, m.at).toFixed(1);
      const line = svgEl('line', { x1: x, x2: x, y1: top - 6, y2: top + height + 4, class: 'mark' });
      line.dataset.from = m.from;
      line.dataset.to = m.to;
      const tip = svgEl('title');
      tip.textContent = clock(m.at) + ': ' + m.from + ' \u2192 ' + m.to;
      line.append(tip);
      g.append(line, svgEl('path', { d: 'M' + x + ',' + (top - 1) + 'l-4,-6h8z', class: 'mark-head' }));
    }
    timeLabels(g, axis, chart.height - 5);
    chart.body.replaceWith(g);
    chart.body = g;
    setLegend(chart, seen.map((s) => ({ name: s, cls: '', band: true })));
    const last = h.segments[h.segments.length - 1];
    const parts = ['now ' + last.state + ' for ' + fmtDuration(axis.t1 - last.from)];
    if (marks.length > 0) {
      const recent = marks.slice(-4).map((m) => m.from + ' \u2192 ' + m.to + ' at ' + clock(m.at));
      parts.push(marks.length + (marks.length === 1 ? ' transition' : ' transitions') + (marks.length > 4 ? ', the last 4: ' : ': ') + recent.join(', '));
    }
    parts.push([...totals].map(([s, t]) => s + ' ' + fmtDuration(t)).join(', ') + ' in all');
    describe(chart, 'State over the last ' + fmtDuration(axis.t1 - axis.t0) + ': ' + parts.join('; '));
  }
`;
