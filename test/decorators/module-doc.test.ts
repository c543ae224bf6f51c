import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import * as decorators from '../../src/decorators/index.js';

/** Functions of the module that are not decorators themselves. */
const NOT_DECORATORS = ['pipelineOf', 'kindDecorator'];

it('the module doc comment of breakwater/decorators names every decorator the module exports', () => {
  const source = readFileSync(new URL('../../src/decorators/index.ts', import.meta.url), 'utf8');
  const doc = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const names = Object.keys(decorators).filter(
    (name) =>
      typeof (decorators as Record<string, unknown>)[name] === 'function' &&
      !NOT_DECORATORS.includes(name),
  );
  expect(names).toContain('rateLimit');
  expect(names.filter((name) => !doc.includes(`\`@${name}\``))).toEqual([]);
  expect(doc).toContain('`kindDecorator(kind)`');
});
