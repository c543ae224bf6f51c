/**
 * The load shedder's sliding window against a model that keeps every event with its bucket and
 * sums them when asked: the same counts after every step of a seeded sequence of requests,
 * forgotten requests, accepts and moves of time (within a bucket, to the next, across several,
 * past the whole window).
 */
import { describe, expect, it } from 'vitest';
import {
  BUCKETS,
  RECENT_BUCKETS,
  ThrottleWindow,
} from '../../../src/policies/load-shedder/ThrottleWindow.js';
import { seededRandom } from '../../support/random.js';

const BUCKET_MS = 100;

/** Every event as (bucket number since time 0, level or -1 for an accept, +1 or -1). */
class Model {
  readonly events: { bucket: number; level: number; n: number }[] = [];
  bucket = 0;

  /** Drops the events no sum can reach any more. */
  forgetOld(): void {
    const kept = this.events.filter((e) => e.bucket > this.bucket - BUCKETS);
    this.events.length = 0;
    this.events.push(...kept);
  }

  sum(from: number, pick: (e: { level: number }) => boolean): number {
    return this.events
      .filter((e) => e.bucket > this.bucket - from && pick(e))
      .reduce((a, e) => a + e.n, 0);
  }
}

describe('ThrottleWindow', () => {
  it('keeps the totals, per-level and recent sums a model recomputes from every event', () => {
    const random = seededRandom(42);
    const w = new ThrottleWindow(BUCKET_MS);
    const m = new Model();
    let now = 0;
    w.advance(now);
    for (let step = 0; step < 5_000; step++) {
      const r = random();
      if (r < 0.5) {
        const level = Math.floor(random() * 4);
        w.request(level);
        m.events.push({ bucket: m.bucket, level, n: 1 });
      } else if (r < 0.55) {
        // Only a request of the current bucket is forgotten (a call that ended at once).
        const level = Math.floor(random() * 4);
        w.request(level);
        w.forget(level);
      } else if (r < 0.85) {
        w.accept();
        m.events.push({ bucket: m.bucket, level: -1, n: 1 });
      } else {
        const jump = random();
        now +=
          jump < 0.6
            ? random() * BUCKET_MS
            : jump < 0.95
              ? random() * 5 * BUCKET_MS
              : random() * 2 * BUCKETS * BUCKET_MS;
        w.advance(now);
        m.bucket = Math.floor(now / BUCKET_MS);
        m.forgetOld();
      }
      const isRequest = (e: { level: number }) => e.level >= 0;
      expect(w.totalRequests).toBe(m.sum(BUCKETS, isRequest));
      expect(w.totalAccepts).toBe(m.sum(BUCKETS, (e) => e.level === -1));
      expect(w.recentRequests()).toBe(m.sum(RECENT_BUCKETS, isRequest));
      expect(w.recentAccepts()).toBe(m.sum(RECENT_BUCKETS, (e) => e.level === -1));
      for (let level = 0; level < 4; level++) {
        expect(w.levelRequests(level)).toBe(m.sum(BUCKETS, (e) => e.level === level));
      }
    }
  });

  it('is empty after clear, and counts afresh', () => {
    const w = new ThrottleWindow(BUCKET_MS);
    w.advance(0);
    w.request(1);
    w.accept();
    w.advance(250);
    w.request(2);
    w.clear();
    expect([w.totalRequests, w.totalAccepts, w.recentRequests(), w.recentAccepts()]).toEqual([
      0, 0, 0, 0,
    ]);
    expect([0, 1, 2, 3].map((l) => w.levelRequests(l))).toEqual([0, 0, 0, 0]);
    w.request(3);
    w.advance(1_000);
    expect([w.totalRequests, w.levelRequests(3), w.recentRequests()]).toEqual([1, 1, 0]);
  });
});
