import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock/Clock.js';
import { DeadlineQueue } from '../../../src/policies/shared/DeadlineQueue.js';
import { NO_TIME } from '../../../src/protocol/step.js';
import { ManualClock } from '../../../src/testing/index.js';

interface Waiter {
  readonly name: string;
  /** The stamp the queue gave it; cleared when it finishes early. */
  stamp: number;
}

/** A queue of waiters whose liveness is "still holds the stamp it was given". */
function setup(ms: number, onExpire?: (w: Waiter, q: DeadlineQueue<Waiter>) => void) {
  const clock = new ManualClock();
  const expired: [string, number, number][] = [];
  const queue: DeadlineQueue<Waiter> = new DeadlineQueue<Waiter>(
    clock,
    ms,
    (w, stamp) => w.stamp === stamp,
    (w, _stamp, tag) => {
      expired.push([w.name, tag, clock.now()]);
      onExpire?.(w, queue);
    },
  );
  const add = (name: string, tag = 0): Waiter => {
    const w: Waiter = { name, stamp: 0 };
    w.stamp = queue.add(w, tag, clock.now());
    return w;
  };
  return { clock, queue, expired, add };
}

describe('DeadlineQueue', () => {
  it('release(stamp) drops its entry at the head at once, and one behind the head once it gets there', () => {
    const { clock, queue, expired, add } = setup(100);
    const a = add('a');
    const b = add('b');
    const c = add('c');
    // b finishes first: its entry waits behind a's, still held.
    const bStamp = b.stamp;
    b.stamp = 0;
    queue.release(bStamp);
    expect(queue.size).toBe(3);
    // a finishes: dropped, and b's dead entry behind it too.
    const aStamp = a.stamp;
    a.stamp = 0;
    queue.release(aStamp);
    expect(queue.size).toBe(1);
    // A stamp the queue does not hold at its head changes nothing live.
    queue.release(123_456);
    expect(queue.size).toBe(1);
    clock.advance(100);
    expect(expired).toEqual([['c', 0, 100]]);
    expect(c.stamp).toBeGreaterThan(0);
  });

  it('arms one timer for any number of entries and expires them in order at their deadlines', () => {
    const { clock, queue, expired, add } = setup(100);
    expect(queue.armed).toBe(false);
    add('a', 1);
    clock.advance(10);
    add('b', 2);
    add('c', 3);
    clock.advance(15);
    add('d', 4);
    expect(queue.size).toBe(4);
    expect(queue.armed).toBe(true);
    expect(clock.pendingTimers).toBe(1);

    clock.advance(74);
    expect(expired).toEqual([]);
    clock.advance(1);
    expect(expired).toEqual([['a', 1, 100]]);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(100);
    expect(expired).toEqual([
      ['a', 1, 100],
      ['b', 2, 110],
      ['c', 3, 110],
      ['d', 4, 125],
    ]);
    expect(queue.size).toBe(0);
    expect(queue.armed).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives each entry a distinct, increasing stamp', () => {
    const { add } = setup(100);
    const stamps = ['a', 'b', 'c'].map((n) => add(n).stamp);
    expect(stamps[0]).toBeLessThan(stamps[1]!);
    expect(stamps[1]).toBeLessThan(stamps[2]!);
  });

  it('skips entries that are no longer live when their deadline comes', () => {
    const { clock, queue, expired, add } = setup(100);
    const a = add('a');
    add('b');
    a.stamp = 0;
    clock.advance(100);
    expect(expired.map((e) => e[0])).toEqual(['b']);
    expect(queue.size).toBe(0);
  });

  it('prune() drops dead entries from the head only, up to the first live one', () => {
    const { queue, add } = setup(100);
    const a = add('a');
    const b = add('b');
    const c = add('c');
    b.stamp = 0;
    queue.prune();
    expect(queue.size).toBe(3);
    a.stamp = 0;
    queue.prune();
    expect(queue.size).toBe(1);
    c.stamp = 0;
    queue.prune();
    expect(queue.size).toBe(0);
  });

  it('re-arms for the remaining time of the next live entry', () => {
    const { clock, expired, add } = setup(100);
    add('a');
    clock.advance(60);
    add('b');
    clock.advance(40);
    expect(expired.map((e) => e[0])).toEqual(['a']);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(59);
    expect(expired).toHaveLength(1);
    clock.advance(1);
    expect(expired.map((e) => [e[0], e[2]])).toEqual([
      ['a', 100],
      ['b', 160],
    ]);
  });

  it('takeFirstLive() returns live entries oldest first, skipping dead ones, with their tag', () => {
    const { queue, add } = setup(Number.POSITIVE_INFINITY);
    add('a', 10);
    const b = add('b', 20);
    add('c', 30);
    b.stamp = 0;
    expect(queue.takeFirstLive()?.name).toBe('a');
    expect(queue.takenTag).toBe(10);
    expect(queue.takeFirstLive()?.name).toBe('c');
    expect(queue.takenTag).toBe(30);
    expect(queue.takeFirstLive()).toBeUndefined();
    expect(queue.size).toBe(0);
  });

  it('with ms = Infinity is a plain FIFO that never arms a timer', () => {
    const { clock, queue, expired, add } = setup(Number.POSITIVE_INFINITY);
    add('a');
    add('b');
    expect(queue.armed).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1e12);
    expect(expired).toEqual([]);
    expect(queue.size).toBe(2);
  });

  it('clear() cancels the timer and forgets every entry without expiring it', () => {
    const { clock, queue, expired, add } = setup(100);
    add('a');
    add('b');
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.armed).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1000);
    expect(expired).toEqual([]);
    add('c');
    clock.advance(100);
    expect(expired.map((e) => e[0])).toEqual(['c']);
  });

  it('keeps FIFO order when it grows past its initial capacity after wrapping around', () => {
    const { queue, add } = setup(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 10; i++) add(`x${i}`, i);
    for (let i = 0; i < 10; i++) queue.takeFirstLive();
    // The head is now in the middle of the ring: fill past 16 so the ring grows wrapped.
    for (let i = 0; i < 40; i++) add(`y${i}`, i);
    const names: string[] = [];
    const tags: number[] = [];
    for (let w = queue.takeFirstLive(); w; w = queue.takeFirstLive()) {
      names.push(w.name);
      tags.push(queue.takenTag);
    }
    expect(names).toEqual(Array.from({ length: 40 }, (_, i) => `y${i}`));
    expect(tags).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('keeps deadlines across growth', () => {
    const { clock, expired, add } = setup(100);
    for (let i = 0; i < 50; i++) {
      add(`w${i}`);
      clock.advance(1);
    }
    clock.advance(200);
    expect(expired.map((e) => e[2])).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
  });

  it('an entry added by the expire callback is expired in turn at its own deadline', () => {
    let once = false;
    const { clock, expired, add } = setup(100, (_w, q) => {
      if (once) return;
      once = true;
      const late: Waiter = { name: 'late', stamp: 0 };
      late.stamp = q.add(late, 9, clock.now());
    });
    add('a');
    clock.advance(300);
    expect(expired.map((e) => [e[0], e[2]])).toEqual([
      ['a', 100],
      ['late', 200],
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  // An add() from inside expire arms a timer; `fire` must not then arm a second one for the
  // next live head and leave the first pending.
  it('keeps a single timer when the expire callback adds an entry while others wait', () => {
    let once = false;
    const { clock, expired, add } = setup(100, (_w, q) => {
      if (once) return;
      once = true;
      const late: Waiter = { name: 'late', stamp: 0 };
      late.stamp = q.add(late, 9, clock.now());
    });
    add('a');
    clock.advance(50);
    add('b');
    clock.advance(50);
    expect(expired.map((e) => e[0])).toEqual(['a']);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(200);
    expect(expired.map((e) => [e[0], e[2]])).toEqual([
      ['a', 100],
      ['b', 150],
      ['late', 200],
    ]);
  });

  it('takeLastLive() returns live entries newest first, skipping dead ones, and the timer still serves the head', () => {
    const { clock, queue, expired, add } = setup(100);
    add('a', 1);
    clock.advance(10);
    add('b', 2);
    const c = add('c', 3);
    c.stamp = 0;
    expect(queue.takeLastLive()?.name).toBe('b');
    expect(queue.takenTag).toBe(2);
    expect(queue.size).toBe(1);
    clock.advance(90);
    expect(expired).toEqual([['a', 1, 100]]);
    expect(queue.takeLastLive()).toBeUndefined();
  });

  it('takeLastLive() keeps FIFO deadlines right across wrap-around and growth', () => {
    const { clock, queue, expired, add } = setup(100);
    for (let k = 0; k < 12; k++) add(`w${k}`);
    for (let k = 0; k < 12; k++) queue.takeFirstLive();
    for (let k = 0; k < 40; k++) {
      add(`n${k}`);
      clock.advance(1);
    }
    expect(queue.takeLastLive()?.name).toBe('n39');
    clock.advance(60);
    expect(expired.map((e) => e[0])).toEqual(['n0']);
  });

  it('dropArrivedBefore() removes the entries that arrived before the cutoff, handing over the live ones', () => {
    const { clock, queue, add } = setup(Number.POSITIVE_INFINITY);
    queue.keepArrivals(clock.now());
    const arrive = (name: string) => {
      add(name);
      queue.noteArrival(clock.now());
    };
    arrive('a');
    clock.advance(5);
    arrive('b');
    clock.advance(5);
    arrive('c');
    const dropped: string[] = [];
    queue.dropArrivedBefore(5, (w) => dropped.push(w.name));
    expect(dropped).toEqual(['a']);
    queue.dropArrivedBefore(10, (w) => dropped.push(w.name));
    expect(dropped).toEqual(['a', 'b']);
    expect(queue.size).toBe(1);
    expect(queue.takeFirstLive()?.name).toBe('c');
  });

  it('keepArrivals() counts the entries already held as arriving at that time', () => {
    const { clock, queue, add } = setup(Number.POSITIVE_INFINITY);
    add('a');
    clock.advance(50);
    queue.keepArrivals(clock.now());
    const dropped: string[] = [];
    queue.dropArrivedBefore(50, (w) => dropped.push(w.name));
    expect(dropped).toEqual([]);
    queue.dropArrivedBefore(51, (w) => dropped.push(w.name));
    expect(dropped).toEqual(['a']);
  });

  it('compact() drops dead entries anywhere, keeping the order and deadlines of the live ones', () => {
    const { clock, queue, expired, add } = setup(100);
    const ws = Array.from({ length: 20 }, (_, k) => {
      const w = add(`w${k}`);
      clock.advance(1);
      return w;
    });
    for (const [k, w] of ws.entries()) if (k % 3 !== 0) w.stamp = 0;
    queue.compact();
    expect(queue.size).toBe(7);
    clock.advance(100);
    expect(expired.map((e) => [e[0], e[2]])).toEqual(
      [0, 3, 6, 9, 12, 15, 18]
        .map((k) => [`w${k}`, 100 + k])
        .filter(([, t]) => (t as number) <= 120),
    );
  });
});

describe('DeadlineQueue.deadlineOf', () => {
  it('finds the deadline of a held entry by its stamp, NaN for one not held', () => {
    const { clock, queue, add } = setup(100);
    const a = add('a');
    clock.advance(30);
    const b = add('b');
    expect(queue.deadlineOf(a.stamp, clock.now())).toBe(100);
    expect(queue.deadlineOf(b.stamp, clock.now())).toBe(130);
    queue.release(a.stamp);
    expect(queue.deadlineOf(a.stamp, clock.now())).toBeNaN();
  });

  it('in coarse mode, gives an entry still without a deadline now + ms, and expires it then', () => {
    const clock = new ManualClock();
    const expired: number[] = [];
    const queue = new DeadlineQueue<Waiter>(
      clock,
      3_200,
      (w, stamp) => w.stamp === stamp,
      () => expired.push(clock.now()),
      true,
    );
    const first: Waiter = { name: 'first', stamp: 0 };
    first.stamp = queue.add(first, 0, -1);
    clock.advance(40);
    // Added without a clock reading while the timer (a tick of 100 ms) is armed.
    const second: Waiter = { name: 'second', stamp: 0 };
    second.stamp = queue.add(second, 0, -1);
    clock.advance(20);
    expect(queue.deadlineOf(second.stamp, clock.now())).toBe(60 + 3_200);
    expect(queue.deadlineOf(first.stamp, clock.now())).toBe(3_200);
    clock.advance(3_200);
    expect(expired).toEqual([3_200, 3_260]);
  });
});

describe('DeadlineQueue keeping the process alive (coarse mode)', () => {
  /** A manual clock that logs what the queue asks of its timer's hold on the process. */
  function holdLog() {
    const manual = new ManualClock();
    const log: boolean[] = [];
    const clock: Clock = {
      now: () => manual.now(),
      setTimer: (cb, ms) => manual.setTimer(cb, ms),
      clearTimer: (h) => manual.clearTimer(h),
      setKeepAlive: (_h, on) => log.push(on),
    };
    return { manual, clock, log };
  }

  /** `calls` calls one after another through a coarse queue of `ms`, each done at once. */
  function oneAtATime(ms: number, calls: number) {
    const { manual, clock, log } = holdLog();
    const queue = new DeadlineQueue<{ stamp: number }>(
      clock,
      ms,
      (w, stamp) => w.stamp === stamp,
      () => {},
      true,
    );
    for (let i = 0; i < calls; i++) {
      const w = { stamp: 0 };
      w.stamp = queue.add(w, 0, NO_TIME);
      const stamp = w.stamp;
      w.stamp = 0;
      queue.release(stamp);
    }
    return { manual, queue, log };
  }

  it('with a tick of at most 50 ms, calls one at a time touch no hold, and the emptied queue lets go at its next firing', () => {
    const { manual, queue, log } = oneAtATime(1_000, 10);
    expect(log).toEqual([]);
    expect(queue.armed).toBe(true);
    manual.advance(queue.tick());
    expect(queue.armed).toBe(false);
  });

  it('with a longer tick, an emptied queue lets go of the process at once, not a tick later', () => {
    const { queue, log } = oneAtATime(7_200_000, 3);
    expect(queue.tick()).toBe(225_000);
    // The first call arms the timer holding the process; each emptying lets go, each new call holds again.
    expect(log).toEqual([false, true, false, true, false]);
  });
});
