import { CHARTS_SCRIPT } from './charts.js';
import { HISTORY_SCRIPT } from './history.js';

/**
 * @internal The dashboard's script, run in the browser. It listens to `events` (relative to
 * the page, so the page works wherever the handler is mounted) and keeps one table row and
 * one group of charts per instance, the charts drawn from the history the page keeps. It
 * knows no policy kind: the server sends each instance's row (counters, levels and detail,
 * from its kind's `dashboard`) and each kind in words. Every name, key and reason from the
 * server reaches the page through `textContent` or `dataset`, never as markup.
 */
export const DASHBOARD_SCRIPT = String.raw`
'use strict';
(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const POINTS = 60;
  /** Size of a sparkline in its own units (the stylesheet gives it the same size in px). */
  const W = 200;
  const H = 40;
  const MAX_TRANSITIONS = 100;
  /** Least ms between two drawings of an instance's charts. */
  const DRAW_EVERY = 1000;
  const COLUMNS = ['kind', 'name', 'key', 'state', 'calls num', 'rejected num', 'p50 num', 'p99 num', 'detail', 'trend'];
  const $ = (id) => document.getElementById(id);
  const rowsEl = $('rows');
  const statusEl = $('status');
  const updatedEl = $('updated');
  const summaryEl = $('summary');
  const omittedEl = $('omitted');
  const emptyEl = $('empty');
  const listEl = $('transitions');
  const noTransitionsEl = $('no-transitions');
  const groupsEl = $('groups');
  const rows = new Map();
  /** Numbers the ids of the chart groups (names and keys never make an id). */
  let groupCount = 0;
  /** Each kind in words, by name, as the last snapshot gave them. */
  let labels = {};

  const labelOf = (kind) => (Object.prototype.hasOwnProperty.call(labels, kind) && typeof labels[kind] === 'string' ? labels[kind] : String(kind));

  const idOf = (i) => JSON.stringify([i.kind, i.name, i.key === undefined ? null : i.key]);
  const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

  /** The server's row of an instance: counters whose growth per second the table shows, and its detail. */
  function counters(i) {
    const r = i.row || {};
    return {
      calls: num(r.calls),
      rejected: num(r.rejected),
      failed: num(r.failed),
      trend: num(r.trend),
      trendLabel: typeof r.trendLabel === 'string' ? r.trendLabel : undefined,
      levelsLabel: typeof r.levelsLabel === 'string' ? r.levelsLabel : 'levels',
    };
  }

  function rate(now, before, seconds) {
    if (now === undefined || before === undefined || !(seconds > 0)) return undefined;
    // A counter that went down belongs to a rebuilt instance: count from zero.
    return Math.max(0, now >= before ? now - before : now) / seconds;
  }

  const fmtRate = (r) => (r === undefined ? '\u2013' : r < 10 ? r.toFixed(1) : String(Math.round(r)));
  function fmtMs(ms) {
    if (num(ms) === undefined) return '\u2013';
    if (ms < 1) return ms.toFixed(2) + ' ms';
    if (ms < 100) return ms.toFixed(1) + ' ms';
    if (ms < 10000) return Math.round(ms) + ' ms';
    return (ms / 1000).toFixed(1) + ' s';
  }
  function fmtDuration(ms) {
    if (num(ms) === undefined) return '';
    const s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.floor(s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }
  const fmtPercent = (x) => (num(x) === undefined ? '\u2013' : Math.round(x * 1000) / 10 + ' %');
  const clock = (at) => new Date(at).toLocaleTimeString();
${HISTORY_SCRIPT}
${CHARTS_SCRIPT}
  /** The instance's group of charts: a heading and one figure per chart, each shown once it has data. */
  function makeGroup(i) {
    const id = 'g' + ++groupCount;
    const section = document.createElement('section');
    section.className = 'group';
    section.id = id;
    section.tabIndex = 0;
    section.setAttribute('role', 'group');
    section.setAttribute('aria-labelledby', id + '-h');
    section.dataset.kind = i.kind;
    section.dataset.name = i.name;
    if (i.key !== undefined) section.dataset.key = i.key;
    const h = document.createElement('h3');
    h.id = id + '-h';
    const kind = document.createElement('span');
    kind.className = 'group-kind';
    kind.textContent = labelOf(i.kind);
    const name = document.createElement('span');
    name.className = 'group-name';
    name.textContent = i.name;
    h.append(kind, ' ', name);
    if (i.key !== undefined) {
      const key = document.createElement('span');
      key.className = 'group-key';
      key.textContent = i.key;
      h.append(' ', key);
    }
    const charts = {
      state: makeFigure('state', 'State', BAND_H),
      rates: makeFigure('rates', 'Per second', CH),
      latency: makeFigure('latency', 'Latency, p50 and p99 of the last minute', CH),
      levels: makeFigure('levels', 'Levels', CH),
    };
    const figures = document.createElement('div');
    figures.className = 'figures';
    figures.append(charts.state.fig, charts.rates.fig, charts.latency.fig, charts.levels.fig);
    section.append(h, figures);
    return { section, charts, id };
  }

  const fmtLevel = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
  const LEVEL_CLASSES = ['c-l0', 'c-l1', 'c-l2', 'c-l3', 'c-l4'];

  /** Redraws an instance's charts from its history. */
  function drawGroup(r, c, at) {
    const h = r.past;
    const axis = timeAxis(h, at);
    const { charts } = r.group;
    if (h.segments.length > 0) drawBand(charts.state, h, axis);
    const rates = [];
    if (c.calls !== undefined) rates.push({ name: 'calls', cls: 'c-calls', value: (p) => p.calls, fmt: fmtRate });
    if (c.rejected !== undefined) rates.push({ name: 'refused', cls: 'c-refused', value: (p) => p.refused, fmt: fmtRate });
    if (c.failed !== undefined) rates.push({ name: 'failed', cls: 'c-failed', value: (p) => p.failed, fmt: fmtRate });
    if (c.trend !== undefined && c.trendLabel !== undefined) {
      rates.push({ name: c.trendLabel.replace(/ per second$/, ''), cls: 'c-other', value: (p) => p.trend, fmt: fmtRate });
    }
    if (rates.length > 0) drawLines(charts.rates, h.points, axis, rates, '/s', 'Per second');
    if (h.points.some((p) => p.p50 !== undefined || p.p99 !== undefined)) {
      drawLines(charts.latency, h.points, axis, [
        { name: 'p50', cls: 'c-p50', value: (p) => p.p50, fmt: fmtMs },
        { name: 'p99', cls: 'c-p99', value: (p) => p.p99, fmt: fmtMs },
      ], 'ms', 'Latency');
    }
    const latest = h.points.length > 0 ? h.points[h.points.length - 1].levels : undefined;
    if (latest !== undefined) {
      charts.levels.name.textContent = c.levelsLabel.charAt(0).toUpperCase() + c.levelsLabel.slice(1);
      const names = Object.keys(latest);
      drawLines(charts.levels, h.points, axis, names.map((n, k) => ({
        name: n,
        cls: LEVEL_CLASSES[k % LEVEL_CLASSES.length],
        value: (p) => (p.levels === undefined ? undefined : num(p.levels[n])),
        fmt: fmtLevel,
      })), '', c.levelsLabel);
    }
  }

  function makeRow(i) {
    const tr = document.createElement('tr');
    tr.dataset.kind = i.kind;
    tr.dataset.name = i.name;
    if (i.key !== undefined) tr.dataset.key = i.key;
    const cells = {};
    for (const c of COLUMNS) {
      const td = document.createElement('td');
      td.className = c;
      tr.appendChild(td);
      cells[c.split(' ')[0]] = td;
    }
    cells.kind.textContent = labelOf(i.kind);
    const group = makeGroup(i);
    // The name leads to the instance's charts: a keyboard's way from the table to them.
    const link = document.createElement('a');
    link.href = '#' + group.id;
    link.textContent = i.name;
    cells.name.append(link);
    cells.key.textContent = i.key === undefined ? '' : i.key;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    const title = document.createElementNS(SVG, 'title');
    const area = document.createElementNS(SVG, 'polygon');
    const line = document.createElementNS(SVG, 'polyline');
    svg.append(title, area, line);
    // The caption says in words what the line shows: what is plotted, its unit, now and peak.
    const caption = document.createElement('span');
    caption.className = 'caption';
    cells.trend.append(svg, caption);
    return { tr, cells, svg, title, area, line, caption, history: [], times: [], before: undefined, at: 0, group, past: newHistory(), drawnAt: undefined };
  }

  function state(r, i) {
    const { cells, tr } = r;
    if (typeof i.state !== 'string') {
      delete tr.dataset.state;
      cells.state.textContent = '';
      return;
    }
    tr.dataset.state = i.state;
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = i.state;
    const since = fmtDuration(i.stats && i.stats.timeInState);
    cells.state.replaceChildren(badge, document.createTextNode(since ? 'for ' + since : ''));
  }

  const detail = (i) => (i.row && typeof i.row.detail === 'string' ? i.row.detail : '');

  function sparkline(r, value, label, at) {
    r.history.push(value === undefined ? 0 : value);
    r.times.push(at);
    if (r.history.length > POINTS) {
      r.history.shift();
      r.times.shift();
    }
    const peak = Math.max(...r.history);
    const max = Math.max(peak, 1e-9);
    const step = W / (POINTS - 1);
    const offset = (POINTS - r.history.length) * step;
    const points = r.history.map((v, k) => (offset + k * step).toFixed(1) + ',' + (H - 1 - (v / max) * (H - 4)).toFixed(1));
    r.line.setAttribute('points', points.join(' '));
    r.area.setAttribute('points', offset.toFixed(1) + ',' + H + ' ' + points.join(' ') + ' ' + W + ',' + H);
    const now = fmtRate(value);
    const span = r.times.length > 1 ? fmtDuration(at - r.times[0]) : '';
    r.caption.textContent = label + ': ' + now + ' (peak ' + fmtRate(peak) + ')';
    const text = label + (span ? ' over the last ' + span : '') + ': now ' + now + ', peak ' + fmtRate(peak);
    r.svg.setAttribute('aria-label', text);
    r.title.textContent = text;
  }

  /** A latency cell: the recent percentile, with the one since the start in its tooltip. */
  function latencyCell(td, latency, q) {
    if (!latency) {
      td.textContent = '';
      td.removeAttribute('title');
      return;
    }
    const recent = latency.recent;
    if (recent === undefined || recent === null) {
      td.textContent = fmtMs(latency[q]);
      td.title = q + ' since the start';
      return;
    }
    td.textContent = recent.count > 0 ? fmtMs(recent[q]) : '\u2013';
    const span = num(recent.window) === undefined ? 'since the start' : 'last ' + fmtDuration(recent.window);
    td.title = q + ' ' + span + ' (' + recent.count + ' calls timed); since the start: ' + fmtMs(latency[q]);
  }

  function update(r, i, at) {
    const c = counters(i);
    const seconds = (at - r.at) / 1000;
    const b = r.before || {};
    const calls = rate(c.calls, b.calls, seconds);
    const rejected = rate(c.rejected, b.rejected, seconds);
    const trend = c.trend !== undefined ? rate(c.trend, b.trend, seconds) : calls;
    r.cells.calls.textContent = c.calls === undefined ? '' : fmtRate(calls);
    r.cells.rejected.textContent = c.rejected === undefined ? '' : fmtRate(rejected);
    const latency = i.stats && i.stats.latency;
    latencyCell(r.cells.p50, latency, 'p50');
    latencyCell(r.cells.p99, latency, 'p99');
    r.cells.detail.textContent = detail(i);
    state(r, i);
    if (r.before !== undefined) sparkline(r, trend, c.trendLabel || 'calls per second', at);
    record(r.past, c, r.before, seconds, i, at);
    // Redrawing every chart costs about the points kept: at most once a second each, and not
    // while the tab is hidden (the next update after it shows again draws them).
    const due = r.drawnAt === undefined || at < r.drawnAt || at - r.drawnAt >= DRAW_EVERY;
    if (due && !document.hidden) {
      drawGroup(r, c, at);
      r.drawnAt = at;
    }
    r.before = c;
    r.at = at;
  }

  /**
   * Puts a node at an index among the children of its parent, moving it only when it is
   * elsewhere: a moved element loses the focus, which would throw a keyboard user out of a
   * chart at every update.
   */
  function place(parent, node, index) {
    const at = parent.children[index];
    if (at !== node) parent.insertBefore(node, at || null);
  }

  function onSnapshot(data) {
    let shown = 0;
    const seen = new Set();
    // State counts by kind, kinds in the order met.
    const states = new Map();
    if (data.kinds && typeof data.kinds === 'object') labels = data.kinds;
    for (const i of data.instances) {
      const id = idOf(i);
      seen.add(id);
      let r = rows.get(id);
      if (r === undefined) rows.set(id, (r = makeRow(i)));
      update(r, i, data.at);
      // The table and the charts follow the server's order.
      place(rowsEl, r.tr, shown);
      place(groupsEl, r.group.section, shown);
      shown++;
      if (typeof i.state === 'string') {
        const counts = states.get(i.kind) || new Map();
        counts.set(i.state, (counts.get(i.state) || 0) + 1);
        states.set(i.kind, counts);
      }
    }
    for (const [id, r] of rows) {
      if (!seen.has(id)) {
        r.tr.remove();
        r.group.section.remove();
        rows.delete(id);
      }
    }
    emptyEl.hidden = data.instances.length > 0;
    const parts = [...states].map(([kind, counts]) => labelOf(kind) + ': ' + [...counts.keys()].sort().map((s) => counts.get(s) + ' ' + s).join(', '));
    summaryEl.textContent = data.instances.length + ' instances' + parts.map((p) => '; ' + p).join('');
    omittedEl.textContent = (data.omitted || [])
      .map((o) => o.count + ' more keys of ' + labelOf(o.kind) + ' ' + JSON.stringify(o.name) + ' not shown')
      .join('; ');
    updatedEl.textContent = 'updated ' + clock(data.at);
    if (Array.isArray(data.transitions)) {
      listEl.replaceChildren();
      for (const t of data.transitions) addTransition(t);
      noTransitionsEl.hidden = data.transitions.length > 0;
    }
  }

  /** Marks a transition event on the state band of its instance (a row of that name and key with states). */
  function bandTransition(t) {
    if (typeof t.to !== 'string' || num(t.at) === undefined) return;
    const key = t.key === undefined ? undefined : t.key;
    let found;
    for (const r of rows.values()) {
      if (r.tr.dataset.name !== t.name || r.tr.dataset.key !== key) continue;
      const segments = r.past.segments;
      if (segments.length === 0) continue;
      // Names are per kind: prefer the instance whose state the event leaves.
      if (found === undefined || segments[segments.length - 1].state === t.from) found = r;
    }
    if (found !== undefined) changeState(found.past, t.to, t.at, t.from);
  }

  function addTransition(t) {
    const li = document.createElement('li');
    li.dataset.name = t.name;
    if (t.key !== undefined) li.dataset.key = t.key;
    li.dataset.to = t.to;
    const time = document.createElement('time');
    time.dateTime = new Date(t.at).toISOString();
    time.textContent = clock(t.at);
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = t.key === undefined ? t.name : t.name + ' [' + t.key + ']';
    const move = document.createElement('span');
    move.className = 'to-' + t.to;
    move.textContent = t.from + ' \u2192 ' + t.to;
    const why = document.createElement('span');
    why.className = 'detail';
    const facts = [String(t.reason)];
    if (num(t.callsInWindow) !== undefined && t.callsInWindow > 0) {
      facts.push('failure rate ' + fmtPercent(t.failureRate), 'slow-call rate ' + fmtPercent(t.slowCallRate), t.callsInWindow + ' calls in window');
    }
    if (t.to === 'open' && num(t.breakDuration) !== undefined) facts.push('open for ' + fmtDuration(t.breakDuration));
    why.textContent = '(' + facts.join(', ') + ')';
    li.append(time, ' ', what, ': ', move, ' ', why);
    // Newest first.
    listEl.prepend(li);
    while (listEl.children.length > MAX_TRANSITIONS) listEl.lastElementChild.remove();
    noTransitionsEl.hidden = true;
  }

  function live(on, text) {
    statusEl.dataset.live = String(on);
    statusEl.textContent = text;
  }

  // The stream sits beside the page: '../events' from '/ops/dashboard/', 'events' from '/ops/dashboard'.
  const source = new EventSource(location.pathname.endsWith('/') ? '../events' : 'events');
  source.addEventListener('open', () => live(true, 'live'));
  source.addEventListener('error', () => live(false, source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting\u2026'));
  source.addEventListener('snapshot', (e) => onSnapshot(JSON.parse(e.data)));
  source.addEventListener('transition', (e) => {
    const t = JSON.parse(e.data);
    addTransition(t);
    bandTransition(t);
  });
})();
`;
