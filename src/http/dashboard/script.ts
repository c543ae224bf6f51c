/**
 * @internal The dashboard's script, run in the browser. It listens to `events` (relative to
 * the page, so the page works wherever the handler is mounted) and keeps one table row per
 * instance. Every name, key and reason from the server reaches the page through `textContent`
 * or `dataset`, never as markup.
 */
export const DASHBOARD_SCRIPT = String.raw`
'use strict';
(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const POINTS = 60;
  const MAX_TRANSITIONS = 100;
  const COLUMNS = ['kind', 'name', 'key', 'state', 'calls num', 'rejected num', 'p50 num', 'p99 num', 'detail', 'trend'];
  const KINDS = { circuitBreaker: 'circuit breaker', bulkhead: 'bulkhead', rateLimiter: 'rate limiter', retry: 'retry', timeout: 'timeout' };
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

  const idOf = (i) => JSON.stringify([i.kind, i.name, i.key === undefined ? null : i.key]);
  const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const sum = (...xs) => (xs.every((x) => num(x) !== undefined) ? xs.reduce((a, b) => a + b, 0) : undefined);

  /** Counters whose growth per second the table shows: calls, refusals, and what the sparkline plots. */
  function counters(i) {
    const s = i.stats || {};
    switch (i.kind) {
      case 'circuitBreaker':
        return { calls: sum(s.successes, s.failures, s.ignored), rejected: num(s.rejections) };
      case 'bulkhead': {
        const r = s.rejectionsByReason || {};
        const calls = num(s.admitted) !== undefined ? s.admitted : s.latency ? num(s.latency.count) : undefined;
        return { calls, rejected: sum(r.full, r.queueTimeout) };
      }
      case 'rateLimiter':
        return { calls: num(s.admitted), rejected: num(s.rejected) };
      case 'retry':
        return { trend: num(s.retries), trendLabel: 'retries per second' };
      case 'timeout':
        return { trend: num(s.timeouts), trendLabel: 'timeouts per second' };
      default:
        return {};
    }
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
    cells.kind.textContent = KINDS[i.kind] || i.kind;
    cells.name.textContent = i.name;
    cells.key.textContent = i.key === undefined ? '' : i.key;
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', '0 0 120 24');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    const title = document.createElementNS(SVG, 'title');
    const line = document.createElementNS(SVG, 'polyline');
    svg.appendChild(title);
    svg.appendChild(line);
    cells.trend.appendChild(svg);
    return { tr, cells, title, line, history: [], before: undefined, at: 0 };
  }

  function state(r, i) {
    const { cells, tr } = r;
    if (i.kind !== 'circuitBreaker') {
      delete tr.dataset.state;
      cells.state.textContent = '';
      return;
    }
    tr.dataset.state = i.state;
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = i.state;
    const since = fmtDuration(i.stats.timeInState);
    cells.state.replaceChildren(badge, document.createTextNode(since ? 'for ' + since : ''));
  }

  function detail(i) {
    const s = i.stats || {};
    switch (i.kind) {
      case 'circuitBreaker':
        return s.failuresInWindow + ' failed / ' + s.callsInWindow + ' in window' + (s.slowCallsInWindow ? ', ' + s.slowCallsInWindow + ' slow' : '');
      case 'bulkhead':
        return s.inFlight + ' / ' + s.maxConcurrent + ' in flight, ' + s.queueLength + ' queued';
      case 'rateLimiter':
        return s.available + ' / ' + s.burst + ' available' + (s.waiting ? ', ' + s.waiting + ' waiting' : '');
      case 'retry':
        return (s.retries === undefined ? '' : s.retries + ' retries, ' + s.gaveUp + ' gave up, ') + s.waiting + ' waiting';
      case 'timeout':
        return 'limit ' + fmtMs(s.timeout) + (s.timeouts === undefined ? '' : ', ' + s.timeouts + ' timed out');
      default:
        return '';
    }
  }

  function sparkline(r, value, label) {
    r.history.push(value === undefined ? 0 : value);
    if (r.history.length > POINTS) r.history.shift();
    const max = Math.max(...r.history, 1e-9);
    const step = 120 / (POINTS - 1);
    const offset = (POINTS - r.history.length) * step;
    const points = r.history.map((v, k) => (offset + k * step).toFixed(1) + ',' + (23 - (v / max) * 22).toFixed(1));
    r.line.setAttribute('points', points.join(' '));
    r.title.textContent = label + ' over the last ' + r.history.length + ' updates (peak ' + fmtRate(Math.max(...r.history)) + ')';
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
    r.cells.p50.textContent = latency ? fmtMs(latency.p50) : '';
    r.cells.p99.textContent = latency ? fmtMs(latency.p99) : '';
    r.cells.detail.textContent = detail(i);
    state(r, i);
    if (r.before !== undefined) sparkline(r, trend, c.trendLabel || 'calls per second');
    r.before = c;
    r.at = at;
  }

  function onSnapshot(data) {
    const seen = new Set();
    const states = {};
    for (const i of data.instances) {
      const id = idOf(i);
      seen.add(id);
      let r = rows.get(id);
      if (r === undefined) rows.set(id, (r = makeRow(i)));
      update(r, i, data.at);
      // Appending an existing row moves it: the table follows the server's order.
      rowsEl.appendChild(r.tr);
      if (i.kind === 'circuitBreaker') states[i.state] = (states[i.state] || 0) + 1;
    }
    for (const [id, r] of rows) {
      if (!seen.has(id)) {
        r.tr.remove();
        rows.delete(id);
      }
    }
    emptyEl.hidden = data.instances.length > 0;
    const parts = Object.keys(states).sort().map((s) => states[s] + ' ' + s);
    summaryEl.textContent = data.instances.length + ' instances' + (parts.length ? '; breakers: ' + parts.join(', ') : '');
    omittedEl.textContent = (data.omitted || [])
      .map((o) => o.count + ' more keys of ' + (KINDS[o.kind] || o.kind) + ' ' + JSON.stringify(o.name) + ' not shown')
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

  const source = new EventSource('events');
  source.addEventListener('open', () => live(true, 'live'));
  source.addEventListener('error', () => live(false, source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting\u2026'));
  source.addEventListener('snapshot', (e) => onSnapshot(JSON.parse(e.data)));
  source.addEventListener('transition', (e) => addTransition(JSON.parse(e.data)));
})();
`;
