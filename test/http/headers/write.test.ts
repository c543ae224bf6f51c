import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../../src/errors/OptionsError.js';
import {
  PROBLEM_CONTENT_TYPE,
  policyName,
  problemBody,
  type RateLimitHeaderVersion,
  type RateLimitQuota,
  rateLimitHeaders,
  retryAfterValue,
} from '../../../src/http/index.js';

/**
 * An example of a draft: the section it is in, the quota it describes, and the header lines
 * it shows, quoted from the draft's text. The writer must produce each line byte for byte
 * (names compared without case: the drafts write both `RateLimit-Remaining` and
 * `Ratelimit-Remaining`). Examples the writer cannot produce from one quota (several policies
 * in one field, a limit that differs from the policy's quota, a missing `remaining` or reset)
 * show only the lines it can.
 */
interface Example {
  readonly section: string;
  readonly quota: RateLimitQuota;
  readonly lines: readonly string[];
}

function quota(
  limit: number,
  windowS: number,
  remaining: number,
  resetS: number,
  policy = 'default',
  partitionKey?: string,
): RateLimitQuota {
  return {
    policy,
    limit,
    windowMs: windowS * 1000,
    remaining,
    resetMs: resetS * 1000,
    ...(partitionKey === undefined ? {} : { partitionKey }),
  };
}

/** draft-ietf-httpapi-ratelimit-headers-06 (December 2022). */
const DRAFT_06: readonly Example[] = [
  {
    section: '§3.2 RateLimit-Policy',
    quota: quota(100, 10, 100, 10),
    lines: ['RateLimit-Policy: 100;w=10', 'RateLimit-Limit: 100'],
  },
  {
    section: '§4 Server Behavior',
    quota: quota(10, 10, 0, 10),
    lines: ['RateLimit-Remaining: 0', 'RateLimit-Limit: 10', 'RateLimit-Reset: 10'],
  },
  {
    section: '§5 Client Behavior',
    quota: quota(10, 10, 1, 7),
    lines: ['RateLimit-Limit: 10', 'RateLimit-Remaining: 1', 'RateLimit-Reset: 7'],
  },
  {
    section: 'B.1.1 Throttling information in responses',
    quota: quota(100, 60, 0, 50),
    lines: ['RateLimit-Limit: 100', 'Ratelimit-Remaining: 0', 'Ratelimit-Reset: 50'],
  },
  {
    section: 'B.1.3 Use for limiting concurrency',
    quota: quota(100, 60, 60, 58),
    lines: ['RateLimit-Limit: 100', 'RateLimit-Remaining: 60', 'RateLimit-Reset: 58'],
  },
  {
    section: 'B.1.4 Use in throttled responses',
    quota: quota(100, 60, 0, 5),
    lines: ['RateLimit-Reset: 5', 'RateLimit-Limit: 100', 'Ratelimit-Remaining: 0'],
  },
  {
    section: 'B.2.1 Throttling window specified via parameter',
    quota: quota(100, 60, 99, 50),
    lines: [
      'RateLimit-Limit: 100',
      'RateLimit-Policy: 100;w=60',
      'Ratelimit-Remaining: 99',
      'Ratelimit-Reset: 50',
    ],
  },
  {
    section: 'B.3.2 Use with multiple windows (the daily policy)',
    quota: quota(5000, 86400, 100, 36000),
    lines: ['RateLimit-Limit: 5000', 'RateLimit-Remaining: 100', 'RateLimit-Reset: 36000'],
  },
];

/** draft-ietf-httpapi-ratelimit-headers-07 (June 2023). */
const DRAFT_07: readonly Example[] = [
  {
    section: '§3.5 RateLimit-Policy',
    quota: quota(100, 10, 50, 5),
    lines: ['RateLimit-Policy: 100;w=10', 'RateLimit: limit=100, remaining=50, reset=5'],
  },
  {
    section: 'B.1.1 Throttling information in responses',
    quota: quota(100, 60, 0, 50),
    lines: ['RateLimit: limit=100, remaining=0, reset=50'],
  },
  {
    section: 'B.1.3 Use for limiting concurrency',
    quota: quota(100, 60, 20, 56),
    lines: ['RateLimit: limit=100, remaining=20, reset=56'],
  },
  {
    section: 'B.2.1 Throttling window specified via parameter',
    quota: quota(100, 60, 99, 50),
    lines: ['RateLimit: limit=100, remaining=99, reset=50', 'RateLimit-Policy: 100;w=60'],
  },
  {
    section: 'B.2.3 Dynamic limits for pushing back and slowing down',
    quota: quota(0, 20, 0, 20),
    lines: ['RateLimit: limit=0, remaining=0, reset=20'],
  },
  {
    section: 'B.3.2 Use with multiple windows (the daily policy)',
    quota: quota(5000, 86400, 100, 36000),
    lines: ['RateLimit: limit=5000, remaining=100, reset=36000'],
  },
];

/** draft-ietf-httpapi-ratelimit-headers-08 (October 2024). */
const DRAFT_08: readonly Example[] = [
  {
    section: '§3.2 RateLimit Policy Field Examples',
    quota: quota(100, 10, 100, 10),
    lines: ['RateLimit-Policy: "default";q=100;w=10'],
  },
  {
    section: '§4 RateLimit Field',
    quota: quota(100, 60, 50, 30),
    lines: ['RateLimit: "default";r=50;t=30'],
  },
  {
    section: '§4.2 RateLimit Field Examples (a partition key)',
    quota: quota(1e9, 60, 300000000, 60, 'default', 'App-999'),
    lines: ['RateLimit: "default";r=300000000;t=60;pk=:QXBwLTk5OQ==:'],
  },
  {
    section: '§5 Server Behavior',
    quota: quota(10, 60, 0, 10, 'problemPolicy'),
    lines: ['RateLimit: "problemPolicy";r=0;t=10'],
  },
  {
    section: 'B.1.3 Use for limiting concurrency',
    quota: quota(100, 60, 60, 58, 'basic'),
    lines: ['RateLimit-Policy: "basic";q=100;w=60', 'RateLimit: "basic";r=60;t=58'],
  },
  {
    section: 'B.2.1 Throttling window specified via parameter',
    quota: quota(100, 60, 99, 50, 'fixedwindow'),
    lines: ['RateLimit: "fixedwindow";r=99;t=50', 'RateLimit-Policy: "fixedwindow";q=100;w=60'],
  },
  {
    section: 'B.2.3 Dynamic limits for pushing back and slowing down',
    quota: quota(15, 20, 0, 20, 'dynamic'),
    lines: ['RateLimit-Policy: "dynamic";q=15;w=20', 'RateLimit: "dynamic";r=0;t=20'],
  },
  {
    section: 'B.3 Dynamic limits for pushing back with Retry-After and slow down',
    quota: quota(100, 60, 15, 40, 'dynamic'),
    lines: ['RateLimit-Policy: "dynamic";q=100;w=60', 'RateLimit: "dynamic";r=15;t=40'],
  },
];

/**
 * draft-12 sends the syntax of -08 (section numbers of -11, May 2026: `t` became the
 * "effective window", the field syntax did not change).
 */
const DRAFT_12: readonly Example[] = [
  {
    section: '§3.2 RateLimit Policy Field Examples',
    quota: quota(100, 10, 100, 10),
    lines: ['RateLimit-Policy: "default";q=100;w=10'],
  },
  {
    section: '§4.2 RateLimit Field Examples',
    quota: quota(100, 60, 50, 30),
    lines: ['RateLimit: "default";r=50;t=30'],
  },
  {
    section: '§4.2 RateLimit Field Examples (a partition key)',
    quota: quota(1e9, 60, 300000000, 60, 'default', 'App-999'),
    lines: ['RateLimit: "default";r=300000000;t=60;pk=:QXBwLTk5OQ==:'],
  },
  {
    section: '§7 Client Behavior',
    quota: quota(10, 10, 1, 7),
    lines: ['RateLimit: "default";r=1;t=7'],
  },
  {
    section: '§8.5 Resource exhaustion',
    quota: quota(10000, 1000, 10000, 10, 'somepolicy'),
    lines: [
      'RateLimit-Policy: "somepolicy";q=10000;w=1000',
      'RateLimit: "somepolicy";r=10000;t=10',
    ],
  },
  {
    section: 'B.1.2 Multiple policies in response',
    quota: quota(5000, 86400, 100, 36000, 'dayLimit'),
    lines: ['RateLimit: "dayLimit";r=100;t=36000'],
  },
  {
    section: 'B.1.3 Use for limiting concurrency',
    quota: quota(100, 60, 20, 56, 'basic'),
    lines: ['RateLimit-Policy: "basic";q=100;w=60', 'RateLimit: "basic";r=20;t=56'],
  },
  {
    section: 'B.2.2 Dynamic limits with parameterized windows',
    quota: quota(100, 60, 9, 50, 'dynamic'),
    lines: ['RateLimit-Policy: "dynamic";q=100;w=60', 'RateLimit: "dynamic";r=9;t=50'],
  },
];

function written(version: RateLimitHeaderVersion, q: RateLimitQuota): Map<string, string> {
  return new Map(rateLimitHeaders(version, q));
}

function expectLines(version: RateLimitHeaderVersion, example: Example): void {
  const headers = written(version, example.quota);
  for (const line of example.lines) {
    const colon = line.indexOf(': ');
    const name = line.slice(0, colon).toLowerCase();
    expect(`${name}: ${headers.get(name)}`).toBe(`${name}: ${line.slice(colon + 2)}`);
  }
}

describe('rateLimitHeaders: the drafts’ own examples, byte for byte', () => {
  it.each(DRAFT_06)('draft-6: -06 $section', (example) => expectLines('draft-6', example));
  it.each(DRAFT_07)('draft-7: -07 $section', (example) => expectLines('draft-7', example));
  it.each(DRAFT_08)('draft-8: -08 $section', (example) => expectLines('draft-8', example));
  it.each(DRAFT_12)('draft-12: -11 $section', (example) => {
    expectLines('draft-12', example);
    expectLines('latest', example);
  });
});

describe('rateLimitHeaders: the headers of each version, in order', () => {
  const q = quota(100, 60, 50, 30, '100-in-1min');
  it.each<[RateLimitHeaderVersion, Array<[string, string]>]>([
    [
      'draft-6',
      [
        ['ratelimit-policy', '100;w=60'],
        ['ratelimit-limit', '100'],
        ['ratelimit-remaining', '50'],
        ['ratelimit-reset', '30'],
      ],
    ],
    [
      'draft-7',
      [
        ['ratelimit-policy', '100;w=60'],
        ['ratelimit', 'limit=100, remaining=50, reset=30'],
      ],
    ],
    [
      'draft-8',
      [
        ['ratelimit-policy', '"100-in-1min";q=100;w=60'],
        ['ratelimit', '"100-in-1min";r=50;t=30'],
      ],
    ],
    [
      'draft-12',
      [
        ['ratelimit-policy', '"100-in-1min";q=100;w=60'],
        ['ratelimit', '"100-in-1min";r=50;t=30'],
      ],
    ],
    [
      'legacy',
      [
        ['x-ratelimit-limit', '100'],
        ['x-ratelimit-remaining', '50'],
        ['x-ratelimit-reset', '30'],
      ],
    ],
  ])('%s', (version, expected) => {
    expect(rateLimitHeaders(version, q)).toEqual(expected);
  });

  it("'latest' is draft-12", () => {
    expect(rateLimitHeaders('latest', q)).toEqual(rateLimitHeaders('draft-12', q));
  });

  it('sends the partition key in both structured fields, and only there', () => {
    const keyed = { ...q, partitionKey: 'trial121323' };
    expect(rateLimitHeaders('draft-8', keyed)).toEqual([
      ['ratelimit-policy', '"100-in-1min";q=100;w=60;pk=:dHJpYWwxMjEzMjM=:'],
      ['ratelimit', '"100-in-1min";r=50;t=30;pk=:dHJpYWwxMjEzMjM=:'],
    ]);
    expect(rateLimitHeaders('draft-7', keyed)).toEqual(rateLimitHeaders('draft-7', q));
    expect(rateLimitHeaders('legacy', keyed)).toEqual(rateLimitHeaders('legacy', q));
  });

  it.each([
    ['', '::'],
    ['a', ':YQ==:'],
    ['ab', ':YWI=:'],
    ['abc', ':YWJj:'],
    ['é€😀', `:${Buffer.from('é€😀').toString('base64')}:`],
  ])('encodes the partition key %j as the byte sequence of its UTF-8 bytes %s', (key, bytes) => {
    const [, limit] = rateLimitHeaders('draft-12', { ...q, partitionKey: key });
    expect(limit![1]).toBe(`"100-in-1min";r=50;t=30;pk=${bytes}`);
  });

  it('escapes " and \\ in the policy name', () => {
    const [policy] = rateLimitHeaders('draft-8', { ...q, policy: 'a"b\\c' });
    expect(policy![1]).toBe('"a\\"b\\\\c";q=100;w=60');
  });

  it('rounds the window and the reset up to whole seconds, the counts down to whole permits', () => {
    const headers = rateLimitHeaders('draft-8', {
      policy: 'p',
      limit: 10.9,
      windowMs: 1,
      remaining: 2.7,
      resetMs: 1001,
    });
    expect(headers).toEqual([
      ['ratelimit-policy', '"p";q=10;w=1'],
      ['ratelimit', '"p";r=2;t=2'],
    ]);
    expect(rateLimitHeaders('legacy', { ...q, resetMs: 0 })[2]).toEqual(['x-ratelimit-reset', '0']);
  });
});

describe('rateLimitHeaders: bad input', () => {
  const q = quota(100, 60, 50, 30);
  it.each<[string, Partial<Record<keyof RateLimitQuota, unknown>>, string]>([
    ['a negative limit', { limit: -1 }, 'quota.limit'],
    ['a NaN limit', { limit: Number.NaN }, 'quota.limit'],
    ['an infinite limit', { limit: Number.POSITIVE_INFINITY }, 'quota.limit'],
    ['a limit beyond a structured field integer', { limit: 1e15 }, 'quota.limit'],
    ['a string limit', { limit: '100' }, 'quota.limit'],
    ['negative remaining', { remaining: -0.5 }, 'quota.remaining'],
    ['NaN remaining', { remaining: Number.NaN }, 'quota.remaining'],
    ['a window of 0', { windowMs: 0 }, 'quota.windowMs'],
    ['a negative window', { windowMs: -1000 }, 'quota.windowMs'],
    ['an infinite window', { windowMs: Number.POSITIVE_INFINITY }, 'quota.windowMs'],
    ['a negative reset', { resetMs: -1 }, 'quota.resetMs'],
    ['a NaN reset', { resetMs: Number.NaN }, 'quota.resetMs'],
    ['a policy name with a control character', { policy: 'a\nb' }, 'quota.policy'],
    ['a policy name beyond ASCII', { policy: 'café' }, 'quota.policy'],
    ['a policy name that is not a string', { policy: 42 }, 'quota.policy'],
    ['a partition key that is not a string', { partitionKey: 42 }, 'quota.partitionKey'],
  ])('%s throws an OptionsError naming %2$j', (_label, change, field) => {
    const bad = { ...q, ...change } as RateLimitQuota;
    expect(() => rateLimitHeaders('draft-12', bad)).toThrow(OptionsError);
    expect(() => rateLimitHeaders('draft-12', bad)).toThrow(
      expect.objectContaining({ option: field, code: 'ERR_BREAKWATER_INVALID_OPTION' }),
    );
  });

  it('an unknown version throws an OptionsError naming the version', () => {
    expect(() => rateLimitHeaders('draft-9' as RateLimitHeaderVersion, q)).toThrow(
      expect.objectContaining({ option: 'version', value: 'draft-9' }),
    );
  });

  it('a bad policy name after a good one is still refused', () => {
    rateLimitHeaders('draft-8', q);
    expect(() => rateLimitHeaders('draft-8', { ...q, policy: 'x\u0000' })).toThrow(OptionsError);
    expect(rateLimitHeaders('draft-8', q)[0]![1]).toBe('"default";q=100;w=60');
  });
});

describe('retryAfterValue', () => {
  it.each([
    [0, '0'],
    [1, '1'],
    [999, '1'],
    [1000, '1'],
    [1001, '2'],
    [30_000, '30'],
    [86_400_000, '86400'],
  ])('%d ms is %s', (ms, value) => {
    expect(retryAfterValue(ms)).toBe(value);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('%d throws an OptionsError', (ms) => {
    expect(() => retryAfterValue(ms)).toThrow(expect.objectContaining({ option: 'retryAfterMs' }));
  });
});

describe('policyName', () => {
  it.each([
    [100, 60_000, '100-in-1min'],
    [5, 30_000, '5-in-30s'],
    [1000, 86_400_000, '1000-in-1day'],
    [1000, 2 * 86_400_000, '1000-in-2days'],
    [50, 3_600_000, '50-in-1h'],
    [50, 90_000, '50-in-90s'],
    [10, 1500, '10-in-1500ms'],
    [10, 0.5, '10-in-0.5ms'],
  ])('%d per %d ms is %s', (limit, windowMs, name) => {
    expect(policyName(limit, windowMs)).toBe(name);
  });

  it('gives names the structured fields can carry', () => {
    expect(rateLimitHeaders('latest', quota(5, 30, 5, 30, policyName(5, 30_000)))[1]![1]).toBe(
      '"5-in-30s";r=5;t=30',
    );
  });

  it.each<[number, number, string]>([
    [-1, 1000, 'limit'],
    [Number.NaN, 1000, 'limit'],
    [1, 0, 'windowMs'],
    [1, Number.POSITIVE_INFINITY, 'windowMs'],
    [1, Number.NaN, 'windowMs'],
  ])('(%d, %d) throws an OptionsError naming %s', (limit, windowMs, field) => {
    expect(() => policyName(limit, windowMs)).toThrow(expect.objectContaining({ option: field }));
  });
});

describe('problemBody', () => {
  it('-10 §5.1 Quota Exceeded: the example body, with the status', () => {
    const body = problemBody({
      status: 429,
      type: 'quota-exceeded',
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      violatedPolicies: ['daily', 'bandwidth'],
    });
    expect(JSON.parse(body)).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
      'violated-policies': ['daily', 'bandwidth'],
    });
    expect(PROBLEM_CONTENT_TYPE).toBe('application/problem+json');
  });

  it('-11 B.1.4 Use in throttled responses: the members in the order of RFC 9457', () => {
    expect(
      problemBody({
        status: 429,
        type: 'quota-exceeded',
        title: 'Too Many Requests',
        violatedPolicies: ['default'],
      }),
    ).toBe(
      '{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,"violated-policies":["default"]}',
    );
  });

  it.each([
    ['temporary-reduced-capacity', 503],
    ['abnormal-usage-detected', 429],
  ])('-10 §5: %s becomes its registered URI', (type, status) => {
    const body = JSON.parse(problemBody({ status, type, title: 't' }));
    expect(body.type).toBe(`https://iana.org/assignments/http-problem-types#${type}`);
  });

  it('takes any other type as a URI, and adds detail and instance when given', () => {
    expect(
      JSON.parse(
        problemBody({
          status: 503,
          type: 'https://example.com/probs/overloaded',
          title: 'Overloaded',
          detail: 'Shedding "sheddable" requests',
          instance: '/orders/1',
        }),
      ),
    ).toEqual({
      type: 'https://example.com/probs/overloaded',
      title: 'Overloaded',
      status: 503,
      detail: 'Shedding "sheddable" requests',
      instance: '/orders/1',
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a status below 100', { status: 99 }, 'status'],
    ['a fractional status', { status: 429.5 }, 'status'],
    ['an empty type', { type: '' }, 'type'],
    ['a missing title', { title: undefined }, 'title'],
    ['a detail that is not a string', { detail: 42 }, 'detail'],
    ['an instance that is not a string', { instance: {} }, 'instance'],
    ['violated policies that are not an array', { violatedPolicies: 'daily' }, 'violatedPolicies'],
    [
      'a violated policy that is not a string',
      { violatedPolicies: ['daily', 1] },
      'violatedPolicies',
    ],
  ])('%s throws an OptionsError naming %2$j', (_label, change, field) => {
    const init = { status: 429, type: 'quota-exceeded', title: 't', ...change };
    expect(() => problemBody(init as never)).toThrow(expect.objectContaining({ option: field }));
  });
});
