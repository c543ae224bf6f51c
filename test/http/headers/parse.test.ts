import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  MAX_PUSHBACK_MS,
  parseGrpcRetryPushback,
  parseHttpDate,
  parseRateLimit,
  parseRateLimitReset,
  parseRetryAfter,
  readPushback,
  serverPushback,
} from '../../../src/http/index.js';
import { pipeline, retry } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';

/** A fixed wall-clock time for dates: Tue, 15 Nov 1994 08:12:31 GMT. */
const NOW = Date.UTC(1994, 10, 15, 8, 12, 31);

describe('parseRetryAfter', () => {
  it.each<[string, string | readonly string[] | null | undefined, number | undefined]>([
    ['delta-seconds', '120', 120_000],
    ['zero seconds', '0', 0],
    ['seconds with surrounding whitespace', '  5 ', 5_000],
    ['seconds with leading zeros', '007', 7_000],
    ['an IMF-fixdate 10 s in the future', 'Tue, 15 Nov 1994 08:12:41 GMT', 10_000],
    ['an IMF-fixdate equal to now', 'Tue, 15 Nov 1994 08:12:31 GMT', 0],
    ['an IMF-fixdate in the past', 'Sun, 06 Nov 1994 08:49:37 GMT', 0],
    ['an IMF-fixdate a day ahead', 'Wed, 16 Nov 1994 08:12:31 GMT', 86_400_000],
    ['an IMF-fixdate in lower case', 'tue, 15 nov 1994 08:13:31 gmt', 60_000],
    ['an RFC 850 date 1 min ahead', 'Tuesday, 15-Nov-94 08:13:31 GMT', 60_000],
    ['an asctime date 2 s ahead', 'Tue Nov 15 08:12:33 1994', 2_000],
    ['an asctime date with a padded day', 'Tue Nov  6 08:12:31 1994', 0],
    ['a leap second', 'Tue, 15 Nov 1994 08:12:60 GMT', 29_000],
    ['a date far in the future', 'Fri, 31 Dec 9999 23:59:59 GMT', MAX_PUSHBACK_MS],
    ['huge seconds', '99999999999', MAX_PUSHBACK_MS],
    ['seconds beyond a double', '9'.repeat(400), MAX_PUSHBACK_MS],
    ['two lines', ['3', '7'], 7_000],
    ['two values joined by a comma', '3, 7', 7_000],
    ['a date and seconds joined', 'Tue, 15 Nov 1994 08:12:41 GMT, 3', 10_000],
    ['junk beside a valid value', 'soon, 4', 4_000],
    ['negative seconds', '-5', undefined],
    ['fractional seconds', '1.5', undefined],
    ['seconds with a unit', '10s', undefined],
    ['a number in exponent form', '1e3', undefined],
    ['junk', 'later', undefined],
    ['an empty value', '', undefined],
    ['whitespace', '   ', undefined],
    ['a date without a zone', 'Tue, 15 Nov 1994 08:12:41', undefined],
    ['a date in another zone', 'Tue, 15 Nov 1994 08:12:41 +0100', undefined],
    ['an impossible date', 'Thu, 31 Feb 1994 08:12:41 GMT', undefined],
    ['an impossible hour', 'Tue, 15 Nov 1994 25:12:41 GMT', undefined],
    ['an ISO 8601 date, which Date.parse takes', '1994-11-15T08:12:41Z', undefined],
    ['a bare year, which Date.parse takes, is seconds', '1995', 1_995_000],
    ['no header (null)', null, undefined],
    ['no header (undefined)', undefined, undefined],
    ['no lines', [], undefined],
  ])('%s: %j gives %j ms', (_label, value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it('reads an RFC 850 year more than 50 years ahead as the century before', () => {
    const now = Date.UTC(2030, 0, 1);
    expect(parseHttpDate('Friday, 01-Jan-99 00:00:00 GMT', now)).toBe(Date.UTC(1999, 0, 1));
    expect(parseHttpDate('Friday, 01-Jan-60 00:00:00 GMT', now)).toBe(Date.UTC(2060, 0, 1));
  });
});

describe('parseGrpcRetryPushback', () => {
  it.each<[string, string | readonly unknown[] | null | undefined, number | false | undefined]>([
    ['milliseconds', '250', 250],
    ['zero', '0', 0],
    ['whitespace around', ' 5 ', 5],
    ['huge', '99999999999999', MAX_PUSHBACK_MS],
    ['two values: the largest', ['5', '9'], 9],
    ['a Buffer (gRPC binary metadata)', [Buffer.from('12')], 12],
    ['negative: do not retry', '-1', false],
    ['a fraction: do not retry', '1.5', false],
    ['junk: do not retry', 'soon', false],
    ['empty: do not retry', '', false],
    ['whitespace: do not retry', '  ', false],
    ['a valid and a negative value: do not retry', '5, -1', false],
    ['absent (null)', null, undefined],
    ['absent (undefined)', undefined, undefined],
    ['no values', [], undefined],
  ])('%s: %j gives %j', (_label, value, expected) => {
    expect(parseGrpcRetryPushback(value)).toBe(expected);
  });
});

describe('parseRateLimit (draft-ietf-httpapi-ratelimit-headers-09)', () => {
  it.each<[string, string | readonly string[] | undefined, string | undefined, number | undefined]>(
    [
      ['an exhausted policy', '"default";r=0;t=10', undefined, 10_000],
      ['quota left: no wait', '"default";r=5;t=10', undefined, undefined],
      ['reset now', '"default";r=0;t=0', undefined, 0],
      ['a token as the policy name', 'default;r=0;t=3', undefined, 3_000],
      ['parameters in another order, spaces after ;', '"day"; t=30; r=0', undefined, 30_000],
      ['two policies, one exhausted', '"burst";r=5;t=1, "day";r=0;t=3600', undefined, 3_600_000],
      ['two exhausted: the longest', '"burst";r=0;t=1,"day";r=0;t=60', undefined, 60_000],
      ['two lines', ['"burst";r=0;t=1', '"day";r=0;t=2'], undefined, 2_000],
      ['with a partition key', '"default";r=0;t=4;pk=:cHJvamVjdDEyMw==:', undefined, 4_000],
      ['no t: the policy window', '"default";r=0', '"default";q=100;w=60', 60_000],
      ['no t, another policy named', '"default";r=0', '"other";q=100;w=60', undefined],
      ['no t, no policy field', '"default";r=0', undefined, undefined],
      ['huge t', '"default";r=0;t=999999999999', undefined, MAX_PUSHBACK_MS],
      ['negative t', '"default";r=0;t=-5', undefined, undefined],
      ['fractional t', '"default";r=0;t=1.5', undefined, undefined],
      ['t as a string', '"default";r=0;t="10"', undefined, undefined],
      ['r as a string', '"default";r="0";t=10', undefined, undefined],
      ['malformed: trailing comma', '"default";r=0;t=10,', undefined, undefined],
      ['malformed: unclosed string', '"default;r=0;t=10', undefined, undefined],
      ['malformed: upper-case key', '"default";R=0;T=10', undefined, undefined],
      ['the draft-07 form', 'limit=10, remaining=0, reset=5', undefined, undefined],
      ['junk', 'slow down', undefined, undefined],
      ['empty', '', undefined, undefined],
      ['absent', undefined, undefined, undefined],
    ],
  )('%s: %j (policy %j) gives %j ms', (_label, value, policy, expected) => {
    expect(parseRateLimit(value, policy)).toBe(expected);
  });
});

describe('parseRateLimitReset (X-RateLimit-Reset)', () => {
  const now = Date.UTC(2025, 0, 1); // 1_735_689_600_000
  it.each<[string, string, number | undefined]>([
    ['seconds from now', '30', 30_000],
    ['fractional seconds', '1.5', 1_500],
    ['zero', '0', 0],
    ['just below 10^9: still seconds', '999999999', MAX_PUSHBACK_MS],
    ['epoch seconds 60 s ahead', '1735689660', 60_000],
    ['epoch seconds in the past', '1735689000', 0],
    ['epoch seconds with a fraction', '1735689600.25', 250],
    ['epoch ms 2.5 s ahead', '1735689602500', 2_500],
    ['epoch ms in the past', '1735689500000', 0],
    ['negative', '-30', undefined],
    ['junk', 'soon', undefined],
    ['empty', '', undefined],
  ])('%s: %j gives %j ms', (_label, value, expected) => {
    expect(parseRateLimitReset(value, now)).toBe(expected);
  });
});

describe('readPushback', () => {
  it('reads a fetch Response', () => {
    const res = new Response(null, { status: 429, headers: { 'Retry-After': '3' } });
    expect(readPushback(res, NOW)).toBe(3_000);
  });

  it('reads a Headers object', () => {
    expect(readPushback(new Headers({ 'grpc-retry-pushback-ms': '40' }), NOW)).toBe(40);
  });

  it('reads a plain headers object whatever the case of its names', () => {
    expect(readPushback({ 'RETRY-AFTER': '2' }, NOW)).toBe(2_000);
    expect(readPushback({ 'Retry-After': ['1', '4'] }, NOW)).toBe(4_000);
    expect(readPushback({ 'x-ratelimit-reset': 9 }, NOW)).toBe(9_000);
  });

  it('reads the response or headers an error carries (fetch wrappers, axios, got, undici, gRPC)', () => {
    const res = new Response(null, { status: 503, headers: { 'retry-after': '1' } });
    // ky, ofetch: the Response on `response`.
    expect(readPushback(Object.assign(new Error('HTTP 503'), { response: res }), NOW)).toBe(1_000);
    // axios, got: a response whose `headers` is an object with lower-case names.
    const axiosLike = Object.assign(new Error('429'), {
      response: { status: 429, headers: { 'retry-after': '6' } },
    });
    expect(readPushback(axiosLike, NOW)).toBe(6_000);
    // undici: `headers` and `statusCode` on the error itself.
    const undiciLike = Object.assign(new Error('429'), {
      statusCode: 429,
      headers: { ratelimit: '"default";r=0;t=8' },
    });
    expect(readPushback(undiciLike, NOW)).toBe(8_000);
    // gRPC: trailing metadata whose `get` answers an array ([] when absent).
    const store = new Map([['grpc-retry-pushback-ms', ['-1']]]);
    const grpcLike = Object.assign(new Error('RESOURCE_EXHAUSTED'), {
      code: 8,
      metadata: { get: (name: string) => store.get(name) ?? [] },
    });
    expect(readPushback(grpcLike, NOW)).toBe(false);
    // A wrapping error: the cause carries the response.
    expect(readPushback(new Error('failed', { cause: res }), NOW)).toBe(1_000);
  });

  it('gives undefined for what carries no pushback', () => {
    expect(readPushback(new Error('boom'), NOW)).toBeUndefined();
    expect(readPushback(new Response(null, { status: 500 }), NOW)).toBeUndefined();
    expect(readPushback({ 'retry-after': 'later' }, NOW)).toBeUndefined();
    expect(readPushback(undefined, NOW)).toBeUndefined();
    expect(readPushback('retry-after: 5', NOW)).toBeUndefined();
    expect(readPushback(42, NOW)).toBeUndefined();
  });

  it('takes grpc-retry-pushback-ms first, then Retry-After, RateLimit, X-RateLimit-Reset', () => {
    const all = {
      'grpc-retry-pushback-ms': '1',
      'retry-after': '2',
      ratelimit: '"d";r=0;t=3',
      'x-ratelimit-reset': '4',
    };
    expect(readPushback(all, NOW)).toBe(1);
    const { 'grpc-retry-pushback-ms': _g, ...noGrpc } = all;
    expect(readPushback(noGrpc, NOW)).toBe(2_000);
    const { 'retry-after': _r, ...rateLimits } = noGrpc;
    expect(readPushback(rateLimits, NOW)).toBe(3_000);
    const { ratelimit: _l, ...reset } = rateLimits;
    expect(readPushback(reset, NOW)).toBe(4_000);
  });

  it('falls through a junk header to the next one', () => {
    expect(readPushback({ 'retry-after': 'soon', 'x-ratelimit-reset': '4' }, NOW)).toBe(4_000);
  });

  it('reads a reset time only when the remaining count is absent or 0', () => {
    expect(readPushback({ 'x-ratelimit-reset': '30', 'x-ratelimit-remaining': '0' }, NOW)).toBe(
      30_000,
    );
    expect(
      readPushback({ 'x-ratelimit-reset': '30', 'x-ratelimit-remaining': '12' }, NOW),
    ).toBeUndefined();
    expect(readPushback({ 'ratelimit-reset': '7', 'ratelimit-remaining': '0' }, NOW)).toBe(7_000);
  });

  it('reads the reset of the draft-07 RateLimit field when nothing remains', () => {
    expect(readPushback({ ratelimit: 'limit=100, remaining=0, reset=30' }, NOW)).toBe(30_000);
    expect(readPushback({ ratelimit: 'reset=5, limit=10' }, NOW)).toBe(5_000);
    expect(readPushback({ ratelimit: 'limit=100, remaining=1, reset=30' }, NOW)).toBeUndefined();
    expect(readPushback({ ratelimit: 'limit=100, remaining=0, reset=-1' }, NOW)).toBeUndefined();
    expect(readPushback({ ratelimit: 'limit=100, remaining=0' }, NOW)).toBeUndefined();
    // A structured RateLimit field with quota left does not hide the older headers.
    expect(
      readPushback(
        { ratelimit: '"d";r=5;t=9', 'ratelimit-remaining': '0', 'ratelimit-reset': '4' },
        NOW,
      ),
    ).toBe(4_000);
  });

  it('measures dates from Date.now() when no time is given', () => {
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    const ms = readPushback({ 'retry-after': inAMinute }) as number;
    // toUTCString drops the ms, so the date is up to 1 s before now + 60 s.
    expect(ms).toBeGreaterThan(50_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });
});

describe('serverPushback as retryAfter', () => {
  it('reads the error of a failed attempt, or the result handleResult retries', () => {
    const res = new Response(null, { status: 429, headers: { 'retry-after': '2' } });
    expect(serverPushback({ result: res })).toBe(2_000);
    expect(serverPushback({ error: { response: res } })).toBe(2_000);
    expect(serverPushback({ error: new Error('x') })).toBeUndefined();
  });
});

describe('a retry with serverPushback', () => {
  it('waits what each response asks, at least the backoff, and resolves with the 200', async () => {
    const clock = new ManualClock();
    const answers = [
      new Response(null, { status: 429, headers: { 'Retry-After': '2' } }),
      new Response(null, { status: 503, headers: { RateLimit: '"d";r=0;t=1' } }),
      new Response('ok', { status: 200 }),
    ];
    const policy = retry({
      clock,
      maxAttempts: 3,
      delay: 1_500,
      jitter: 'none',
      handleResult: (r: Response) => r.status !== 200,
      retryAfter: serverPushback,
    });
    const starts: number[] = [];
    const outcome = track(
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        return answers.shift()!;
      }),
    );
    await clock.runAll();
    await outcome.done;
    // 2 s asked, over a backoff of 1.5 s; then 1 s asked, under a backoff of 3 s.
    expect(starts).toEqual([0, 2_000, 5_000]);
    expect((outcome.value as Response).status).toBe(200);
  });
});

describe('a retry with serverPushback, on what it cannot or should not wait', () => {
  it.each<[string, Record<string, string>, number[], string[]]>([
    ['a huge Retry-After: gives up at once', { 'retry-after': '99999999999' }, [], ['pushback']],
    ['a Retry-After above maxDelay', { 'retry-after': '31' }, [], ['pushback']],
    ['a negative grpc pushback', { 'grpc-retry-pushback-ms': '-1' }, [], ['pushback']],
    ['a junk Retry-After: the backoff', { 'retry-after': 'soon' }, [100, 200], ['max-attempts']],
    ['no pushback: the backoff', {}, [100, 200], ['max-attempts']],
  ])('%s', async (_label, headers, delays, reasons) => {
    const clock = new ManualClock();
    // maxDelay 30 s (the default).
    const policy = retry({
      clock,
      jitter: 'none',
      handleResult: (r: Response) => r.status === 429,
      retryAfter: serverPushback,
    });
    const seenDelays: number[] = [];
    const seenReasons: string[] = [];
    policy.onRetry((e) => seenDelays.push(e.delay));
    policy.onGiveUp((e) => seenReasons.push(e.reason));
    const outcome = track(
      pipeline(policy).execute(() => new Response(null, { status: 429, headers })),
    );
    await clock.runAll();
    await outcome.done;
    expect((outcome.value as Response).status).toBe(429);
    expect(seenDelays).toEqual(delays);
    expect(seenReasons).toEqual(reasons);
  });
});

describe('server pushback through real HTTP on loopback', () => {
  it('waits the pushback of a 429 and stops when the server says not to retry', async () => {
    // Answers, in order: 429 with a 5 ms pushback, 503 with a 5 ms pushback, 200; then, on the
    // path /stop, 429 with a negative pushback (do not retry).
    const seen: string[] = [];
    let n = 0;
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.setHeader('connection', 'close');
      if (req.url === '/stop') {
        res.writeHead(429, { 'grpc-retry-pushback-ms': '-1' }).end();
      } else if (n++ < 2) {
        res.writeHead(n === 1 ? 429 : 503, { 'grpc-retry-pushback-ms': '5' }).end();
      } else {
        res.writeHead(200).end('ok');
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const policy = retry({
        maxAttempts: 5,
        delay: 1,
        jitter: 'none',
        handleResult: (r: Response) => r.status === 429 || r.status === 503,
        retryAfter: serverPushback,
      });
      const retries: number[] = [];
      const reasons: string[] = [];
      policy.onRetry((e) => retries.push(e.delay));
      policy.onGiveUp((e) => reasons.push(e.reason));
      const p = pipeline(policy);
      const call = (path: string) =>
        p.execute(async ({ signal }) => {
          const res = await fetch(`${base}${path}`, { signal });
          await res.arrayBuffer();
          return res;
        });

      const ok = await call('/');
      expect(ok.status).toBe(200);
      expect(retries).toEqual([5, 5]);

      const stopped = await call('/stop');
      expect(stopped.status).toBe(429);
      expect(reasons).toEqual(['pushback']);
      expect(seen).toEqual(['/', '/', '/', '/stop']);
    } finally {
      server.close();
    }
  });
});
