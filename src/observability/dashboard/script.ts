/**
 * @internal The dashboard's script, run in the browser. It listens to `events` (relative to
 * the page, so the page works wherever the handler is mounted) and keeps one table row per
 * instance. It knows no policy kind: the server sends each instance's row (counters and
 * detail, from its kind's `dashboard`) and each kind in words. Every name, key and reason from
 * the server reaches the page through `textContent` or `dataset`, never as markup.
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
  const rows = new Map();
  /** Each kind in words, by name, as the last snapshot gave them. */
  let labels = {};

  const labelOf = (kind) => (Object.prototype.hasOwnProperty.call(labels, kind) && typeof labels[kind] === 'string' ? labels[kind] : String(kind));

  const idOf = (i) => JSON.stringify([i.kind, i.name, i.key === undefined ? null : i.key]);
  const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

  /** The server's row of an instance: counters whose growth per second the table shows, and its detail. */
  function counters(i) {
    const r = i.row || {};
    return { calls: num(r.calls), rejected: num(r.rejected), trend: num(r.trend), trendLabel: typeof r.trendLabel === 'string' ? r.trendLabel : undefined };
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
    cells.name.textContent = i.name;
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
    return { tr, cells, svg, title, area, line, caption, history: [], times: [], before: undefined, at: 0 };
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
    r.before = c;
    r.at = at;
  }

  function onSnapshot(data) {
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
      // Appending an existing row moves it: the table follows the server's order.
      rowsEl.appendChild(r.tr);
      if (typeof i.state === 'string') {
        const counts = states.get(i.kind) || new Map();
        counts.set(i.state, (counts.get(i.state) || 0) + 1);
        states.set(i.kind, counts);
      }
    }
    for (const [id, r] of rows) {
      if (!seen.has(id)) {
        r.tr.remove();
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
  source.addEventListener('transition', (e) => addTransition(JSON.parse(e.data)));
})();
`;
