import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import * as decorators from '../../src/decorators/index.js';

it('the module doc comment of breakwater/decorators names every decorator the module exports', () => {
  const source = readFileSync(new URL('../../src/decorators/index.ts', import.meta.url), 'utf8');
  const doc = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const names = Object.keys(decorators).filter(
    (name) =>
      typeof (decorators as Record<string, unknown>)[name] === 'function' && name !== 'pipelineOf',
  );
  expect(names).toContain('rateLimit');
  expect(names.filter((name) => !doc.includes(`\`@${name}\``))).toEqual([]);
});
