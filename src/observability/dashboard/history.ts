/**
 * @internal The part of the dashboard's script that remembers: each instance's points of the
 * last minutes (rates, latency, levels) and its state over time, kept in the page from the
 * live stream, so the server keeps no history. Both are bounded by time and by count: a ring
 * of at most `MAX_POINTS` (five minutes at the fastest interval, 100 ms) and at most
 * `MAX_SEGMENTS` state changes, however long the page stays open or a breaker flaps.
 * Inlined into the script's function, it uses the helpers declared there (`num`, `rate`).
 */
export const HISTORY_SCRIPT = `
  const WINDOW_MS = 5 * 60 * 1000;
  const MAX_POINTS = 3000;
  const MAX_SEGMENTS = 1000;

  function newHistory() {
    return { points: [], segments: [], marks: [] };
  }

  /** Drops what fell out of the window, and the oldest points past their cap. */
  function prune(h, now) {
    const start = now - WINDOW_MS;
    let n = 0;
    while (n < h.points.length && (h.points[n].at < start || h.points.length - n > MAX_POINTS)) n++;
    if (n > 0) h.points.splice(0, n);
    // A segment lasts until the next one starts: keep the one still running at the window's start.
    n = 0;
    while (n + 1 < h.segments.length && h.segments[n + 1].from <= start) n++;
    if (n > 0) h.segments.splice(0, n);
    n = 0;
    while (n < h.marks.length && h.marks[n].at < start) n++;
    if (n > 0) h.marks.splice(0, n);
  }

  /** Latency of the recent window, when the instance keeps it and timed a call in it. */
  function recentLatency(i) {
    const recent = i.stats && i.stats.latency && i.stats.latency.recent;
    if (!recent || !(recent.count > 0)) return { p50: undefined, p99: undefined };
    return { p50: num(recent.p50), p99: num(recent.p99) };
  }

  /** The instance's levels (in flight, limit, balance, ...) as numbers, or undefined. */
  function levelsOf(i) {
    const l = i.row && i.row.levels;
    if (!l || typeof l !== 'object') return undefined;
    const out = {};
    let any = false;
    for (const k of Object.keys(l)) {
      if (num(l[k]) !== undefined) {
        out[k] = l[k];
        any = true;
      }
    }
    return any ? out : undefined;
  }

  /**
   * Adds the point of a snapshot: rates from the growth of the counters since the previous
   * one (none on the first), latency and levels as they are.
   */
  function record(h, c, before, seconds, i, at) {
    const first = before === undefined;
    const b = before || {};
    const lat = recentLatency(i);
    h.points.push({
      at,
      calls: first ? undefined : rate(c.calls, b.calls, seconds),
      refused: first ? undefined : rate(c.rejected, b.rejected, seconds),
      failed: first ? undefined : rate(c.failed, b.failed, seconds),
      trend: first ? undefined : rate(c.trend, b.trend, seconds),
      p50: lat.p50,
      p99: lat.p99,
      levels: levelsOf(i),
    });
    if (typeof i.state === 'string') changeState(h, i.state, at, undefined);
    prune(h, at);
  }

  /**
   * Notes a state at a time: a new segment and a transition mark when it differs from the state
   * now. A snapshot notes the state it lists, a transition event the move it tells of (with its
   * own time, so a state held for less than one interval still shows).
   */
  function changeState(h, state, at, from) {
    const last = h.segments[h.segments.length - 1];
    if (last === undefined) {
      h.segments.push({ state, from: at });
      return;
    }
    if (last.state === state) return;
    const when = Math.max(at, last.from);
    h.marks.push({ at: when, from: from === undefined ? last.state : from, to: state });
    h.segments.push({ state, from: when });
    // Events come between snapshots too: cap here, not only when a snapshot prunes.
    if (h.segments.length > MAX_SEGMENTS) h.segments.splice(0, h.segments.length - MAX_SEGMENTS);
    if (h.marks.length > MAX_SEGMENTS) h.marks.splice(0, h.marks.length - MAX_SEGMENTS);
  }
`;
