/**
 * The CommonJS and the ES module builds loaded together in one process (a CommonJS dependency
 * under an ESM application) must accept each other's policies, pipelines and registries, and
 * say what happened when an object comes from a copy of another version. Runs the BUILT
 * package in a child process; `npm test` builds before Vitest runs.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { runNodeScript } from '../support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/mixed-copies.mjs', import.meta.url));

beforeAll(() => {
  for (const file of ['dist/index.js', 'dist/index.cjs']) {
    if (!existsSync(`${root}${file}`)) {
      throw new Error(
        `The package is not built (missing ${file}): run npm run build first ` +
          '(npm test does this before running Vitest).',
      );
    }
  }
});

it('objects made by the CommonJS build work in the ES module build and the other way round', async () => {
  const exit = await runNodeScript(fixture, [], root, 30_000);
  expect(exit.stderr).toBe('');
  expect(exit).toMatchObject({ code: 0, killed: false });
  const out = JSON.parse(exit.stdout);
  expect(out.distinctCopies).toBe(true);
  expect(out.esmPipelineOfCjsPolicies).toEqual({
    ok: true,
    value: { value: 'ok on attempt 3', late: 'fallback', failures: 5, state: 'closed' },
  });
  expect(out.cjsPipelineOfEsmPolicies).toEqual({ ok: true, value: { value: 7, sync: 8 } });
  expect(out.esmBuilderOfCjsPolicies).toEqual({ ok: true, value: { same: true, value: 9 } });
  expect(out.instanceofAcrossCopies).toEqual({
    breaker: true,
    retry: true,
    timeout: true,
    bulkhead: true,
    rateLimiter: true,
    fallback: true,
    pipeline: true,
    registry: true,
    breakerIsNotRetry: false,
  });
  expect(out.esmRegistryRegistersCjsPolicy).toEqual({
    ok: true,
    value: { same: true, inSnapshot: true },
  });
  expect(out.esmMetricsOfCjsRegistry).toEqual({ ok: true, value: true });
  expect(out.cjsMetricsOfEsmRegistry).toEqual({ ok: true, value: true });
  expect(out.esmOtelOfCjsRegistry).toEqual({ ok: true, value: true });
  expect(out.otherVersion).toMatchObject({ ok: false, name: 'OptionsError' });
  expect(out.otherVersion.message).toMatch(
    /a CircuitBreaker from another copy of breakwater, version 0\.0\.1-other, which this copy \(0\.1\.0\) cannot use/,
  );
});

it('a subclass of a policy keeps the ordinary instanceof', async () => {
  const { CircuitBreaker } = await import('../../src/index.js');
  class TracedBreaker extends CircuitBreaker {}
  expect(new TracedBreaker()).toBeInstanceOf(CircuitBreaker);
  expect(new TracedBreaker()).toBeInstanceOf(TracedBreaker);
  expect(new CircuitBreaker() instanceof TracedBreaker).toBe(false);
});
