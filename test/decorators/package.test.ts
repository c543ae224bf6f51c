/**
 * The built `breakwater/decorators` entry (dist/, loaded by package name) shares its classes
 * with the core entry: a policy made with `breakwater` works in a decorator from
 * `breakwater/decorators`, through `import` and through `require`. Needs `npm run build` first,
 * like test/package/exports.test.ts.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

type Core = typeof import('../../src/index.js');
type Decorators = typeof import('../../src/decorators/index.js');

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

beforeAll(() => {
  for (const file of ['dist/decorators/index.js', 'dist/decorators/index.cjs']) {
    if (!existsSync(`${root}${file}`)) {
      throw new Error(`The package is not built (missing ${file}): run npm run build first.`);
    }
  }
});

function decorateAndCall(core: Core, decorators: Decorators) {
  const breaker = new core.CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
  const method = (decorators.circuitBreaker(breaker) as (v: unknown, c: unknown) => () => never)(
    () => {
      throw new Error('down');
    },
    { kind: 'method', name: 'call' },
  );
  expect(method).toThrow('down');
  expect(breaker.state).toBe('open');
  expect(decorators.pipelineOf({ method }, 'method')).toBeInstanceOf(core.Pipeline);
  expect(() => decorators.usePipeline(core.pipeline(breaker))).not.toThrow();
}

describe('breakwater/decorators, built', () => {
  it('import: accepts policies and pipelines made with the core entry', async () => {
    const core = (await import(/* @vite-ignore */ 'breakwater')) as unknown as Core;
    const decorators = (await import(
      /* @vite-ignore */ 'breakwater/decorators'
    )) as unknown as Decorators;
    decorateAndCall(core, decorators);
  });

  it('require: accepts policies and pipelines made with the core entry', () => {
    decorateAndCall(require('breakwater') as Core, require('breakwater/decorators') as Decorators);
  });
});
