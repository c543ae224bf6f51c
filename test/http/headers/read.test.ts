import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_PUSHBACK_MS,
  type RateLimitHeaderVersion,
  type RateLimitQuota,
  type RateLimitState,
  rateLimitHeaders,
  readPushback,
  readRateLimit,
} from '../../../src/http/index.js';

const NOW = Date.UTC(2026, 11, 7, 18, 0, 0);

/** Header lines as a draft shows them ("Name: value"), as a fetch `Headers`. */
function headers(...lines: string[]): Headers {
  const out = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(': ');
    out.append(line.slice(0, colon), line.slice(colon + 2));
  }
  return out;
}

describe('readRateLimit: the drafts’ examples', () => {
  it.each<[string, Headers, RateLimitState | undefined]>([
    [
      '-10 §3 two structured policies',
      headers('RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400'),
      {
        shape: 'structured',
        policies: [
          { policy: 'burst', limit: 100, windowMs: 60_000 },
          { policy: 'daily', limit: 1000, windowMs: 86_400_000 },
        ],
      },
    ],
    [
      '-08 §4.2 remaining with a partition key and no reset',
      headers('RateLimit: "default";r=999;pk=:dHJpYWwxMjEzMjM=:'),
      { shape: 'structured', policies: [{ policy: 'default', remaining: 999 }] },
    ],
    [
      '-11 B.2.1 a policy and its service limit',
      headers('RateLimit: "fixedwindow";r=99;t=50', 'RateLimit-Policy: "fixedwindow";q=100;w=60'),
      {
        shape: 'structured',
        policies: [
          { policy: 'fixedwindow', limit: 100, windowMs: 60_000, remaining: 99, resetMs: 50_000 },
        ],
      },
    ],
    [
      '-08 B.3.1 token names, no remaining',
      headers('RateLimit-Policy: quota;q=100;w=1', 'RateLimit: quota;t=1'),
      {
        shape: 'structured',
        policies: [{ policy: 'quota', limit: 100, windowMs: 1_000, resetMs: 1_000 }],
      },
    ],
    [
      '-08 B.3.2 two windows, the limited one first',
      headers(
        'RateLimit-Policy: "hour";q=1000;w=3600, "day";q=5000;w=86400',
        'RateLimit: "day";r=100;t=36000',
      ),
      {
        shape: 'structured',
        policies: [
          { policy: 'day', limit: 5000, windowMs: 86_400_000, remaining: 100, resetMs: 36_000_000 },
          { policy: 'hour', limit: 1000, windowMs: 3_600_000 },
        ],
      },
    ],
    [
      '-07 §3.5 the dictionary and its policy',
      headers('RateLimit-Policy: 100;w=10', 'RateLimit: limit=100, remaining=50, reset=5'),
      {
        shape: 'draft-7',
        policies: [{ limit: 100, windowMs: 10_000, remaining: 50, resetMs: 5_000 }],
      },
    ],
    [
      '-07 B.2.2 a limit below the policy’s quota: no window',
      headers('RateLimit: limit=10, remaining=9, reset=50', 'RateLimit-Policy: 100;w=60'),
      { shape: 'draft-7', policies: [{ limit: 10, remaining: 9, resetMs: 50_000 }] },
    ],
    [
      '-07 B.3.1 missing remaining',
      headers('RateLimit: limit=10, reset=1'),
      { shape: 'draft-7', policies: [{ limit: 10, resetMs: 1_000 }] },
    ],
    [
      '-07 B.3.2 two windows: the one whose quota is the limit',
      headers(
        'RateLimit: limit=5000, remaining=100, reset=36000',
        'RateLimit-Policy: 1000;w=3600, 5000;w=86400',
      ),
      {
        shape: 'draft-7',
        policies: [{ limit: 5000, windowMs: 86_400_000, remaining: 100, resetMs: 36_000_000 }],
      },
    ],
    [
      '-06 B.2.1 the split fields and the policy',
      headers(
        'RateLimit-Limit: 100',
        'RateLimit-Policy: 100;w=60',
        'Ratelimit-Remaining: 99',
        'Ratelimit-Reset: 50',
      ),
      {
        shape: 'draft-6',
        policies: [{ limit: 100, windowMs: 60_000, remaining: 99, resetMs: 50_000 }],
      },
    ],
    [
      '-06 B.1.4 the split fields without a policy',
      headers('RateLimit-Reset: 5', 'RateLimit-Limit: 100', 'Ratelimit-Remaining: 0'),
      { shape: 'draft-6', policies: [{ limit: 100, remaining: 0, resetMs: 5_000 }] },
    ],
    [
      'X-RateLimit-* with the reset in seconds from now',
      headers('X-RateLimit-Limit: 100', 'X-RateLimit-Remaining: 0', 'X-RateLimit-Reset: 30'),
      { shape: 'legacy', policies: [{ limit: 100, remaining: 0, resetMs: 30_000 }] },
    ],
    [
      'X-RateLimit-* with the reset as epoch seconds (GitHub)',
      headers(
        'x-ratelimit-limit: 60',
        'x-ratelimit-remaining: 56',
        `x-ratelimit-reset: ${NOW / 1000 + 120}`,
      ),
      { shape: 'legacy', policies: [{ limit: 60, remaining: 56, resetMs: 120_000 }] },
    ],
  ])('%s', (_label, source, expected) => {
    expect(readRateLimit(source, NOW)).toEqual(expected);
  });
});

describe('readRateLimit: which shape, and what is left out', () => {
  it('prefers the structured fields to the legacy ones sent beside them', () => {
    const source = {
      'RateLimit-Policy': '"p";q=5;w=60',
      RateLimit: '"p";r=4;t=60',
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '4',
    };
    expect(readRateLimit(source, NOW)?.shape).toBe('structured');
  });

  it('ignores a malformed structured field and reads the next shape', () => {
    const source = { RateLimit: '"p;r=0', 'X-RateLimit-Remaining': '3' };
    expect(readRateLimit(source, NOW)).toEqual({ shape: 'legacy', policies: [{ remaining: 3 }] });
  });

  it('leaves out numbers that are negative, fractional or not numbers', () => {
    expect(
      readRateLimit({ RateLimit: '"p";r=-1;t=1.5', 'RateLimit-Policy': '"p";q="100";w=0' }, NOW),
    ).toBeUndefined();
    expect(
      readRateLimit({ 'x-ratelimit-limit': 'ten', 'x-ratelimit-remaining': '2' }, NOW),
    ).toEqual({ shape: 'legacy', policies: [{ remaining: 2 }] });
  });

  it('reads a (available quota) and w (effective window), the names the pending revision (PR #166) gives r and t', () => {
    expect(readRateLimit({ ratelimit: '"burst";a=80;w=45' }, NOW)).toEqual({
      shape: 'structured',
      policies: [{ policy: 'burst', remaining: 80, resetMs: 45_000 }],
    });
    // r and t, where present, win.
    expect(readRateLimit({ ratelimit: '"p";r=1;t=2;a=3;w=4' }, NOW)?.policies).toEqual([
      { policy: 'p', remaining: 1, resetMs: 2_000 },
    ]);
    expect(readPushback({ ratelimit: '"burst";a=0;w=45' }, NOW)).toBe(45_000);
  });

  it('caps a reset at MAX_PUSHBACK_MS', () => {
    expect(readRateLimit({ ratelimit: '"p";r=0;t=99999999999' }, NOW)).toEqual({
      shape: 'structured',
      policies: [{ policy: 'p', remaining: 0, resetMs: MAX_PUSHBACK_MS }],
    });
  });

  it('reads what an error or a response carries, and gives undefined without rate limit headers', () => {
    const error = Object.assign(new Error('429'), {
      response: new Response(null, { status: 429, headers: { ratelimit: '"p";r=0;t=2' } }),
    });
    expect(readRateLimit(error, NOW)?.policies).toEqual([
      { policy: 'p', remaining: 0, resetMs: 2_000 },
    ]);
    expect(readRateLimit(new Response(null, { headers: { 'retry-after': '3' } }))).toBeUndefined();
    expect(readRateLimit(new Error('boom'))).toBeUndefined();
    expect(readRateLimit(undefined)).toBeUndefined();
  });
});

const VERSIONS: readonly RateLimitHeaderVersion[] = [
  'draft-6',
  'draft-7',
  'draft-8',
  'draft-12',
  'latest',
  'legacy',
];

/** What a reader gives back of a quota the writer wrote in `version`. */
function expectedOf(version: RateLimitHeaderVersion, q: RateLimitQuota) {
  const resetMs = Math.min(Math.ceil(q.resetMs / 1000) * 1000, MAX_PUSHBACK_MS);
  const remaining = Math.floor(q.remaining);
  const structured = version !== 'draft-6' && version !== 'draft-7' && version !== 'legacy';
  return {
    shape: structured ? 'structured' : version,
    policy: {
      ...(structured ? { policy: q.policy } : {}),
      limit: Math.floor(q.limit),
      ...(version === 'legacy' ? {} : { windowMs: Math.ceil(q.windowMs / 1000) * 1000 }),
      remaining,
      resetMs,
    },
    wait: remaining === 0 ? resetMs : undefined,
  };
}

const ms = (max: number) =>
  fc.oneof(fc.constant(0), fc.integer({ min: 0, max }), fc.double({ min: 0, max, noNaN: true }));

const quotas: fc.Arbitrary<RateLimitQuota> = fc.record(
  {
    policy: fc
      .array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 16 })
      .map((codes) => String.fromCharCode(...codes)),
    limit: fc.oneof(
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.double({ min: 0, max: 1e9, noNaN: true }),
    ),
    windowMs: fc.oneof(
      fc.integer({ min: 1, max: 1e10 }),
      fc.double({ min: 0.001, max: 1e7, noNaN: true }),
    ),
    remaining: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1.5, noNaN: true }), ms(1e6)),
    // Up to 40 days, beyond MAX_PUSHBACK_MS (24.8 days).
    resetMs: ms(40 * 86_400_000),
    partitionKey: fc.string(),
  },
  { requiredKeys: ['policy', 'limit', 'windowMs', 'remaining', 'resetMs'] },
);

describe('round trip: what the writer writes, the readers read back', () => {
  it('readRateLimit gives back the limit, window, remaining and reset, and readPushback the wait, for every version', () => {
    fc.assert(
      fc.property(fc.constantFrom(...VERSIONS), quotas, (version, q) => {
        const written = new Headers(rateLimitHeaders(version, q));
        const expected = expectedOf(version, q);
        expect(readRateLimit(written, NOW)).toEqual({
          shape: expected.shape,
          policies: [expected.policy],
        });
        expect(readPushback(written, NOW)).toBe(expected.wait);
      }),
      { seed: 29, numRuns: 2_000 },
    );
  });
});

describe('round trip through real HTTP on loopback', () => {
  const quota: RateLimitQuota = {
    policy: '5-in-30s',
    limit: 5,
    windowMs: 30_000,
    remaining: 0,
    resetMs: 12_345,
    partitionKey: 'client-1',
  };
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const version = (req.url ?? '/').slice(1) as RateLimitHeaderVersion;
      for (const [name, value] of rateLimitHeaders(version, quota)) res.setHeader(name, value);
      res.writeHead(429).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it.each(VERSIONS)(
    '%s: the client reads the wait and the state the server sent',
    async (version) => {
      const res = await fetch(`${base}/${version}`);
      await res.arrayBuffer();
      expect(res.status).toBe(429);
      expect(readPushback(res, NOW)).toBe(13_000);
      const expected = expectedOf(version, quota);
      expect(readRateLimit(res, NOW)).toEqual({
        shape: expected.shape,
        policies: [expected.policy],
      });
    },
  );
});
