/**
 * Every TypeScript block of the README is type checked (TypeScript, `module: nodenext`, strict)
 * against the built package, as a user's code would be, and then run in a process of its own.
 * A block that uses a name of the library without importing it gets it imported from
 * `breakwater`; the names the examples take as given come from prelude.mts. The text blocks that
 * show the library's output are compared with what the library prints.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as library from '../../src/index.js';
import { ConfigError, Registry } from '../../src/index.js';
import { runNodeScript } from '../support/child.js';
import { typeCheck } from '../support/docPrograms.js';
import { codeBlocks, type ReadmeBlock } from '../support/readme.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = codeBlocks(readme);
// The Redis example needs a server and is checked further (its first decision made by Redis, its
// client's reconnection delays) by test/redis/readme.test.ts.
const tsBlocks = blocks.filter(
  (b) => b.lang === 'ts' && !b.code.includes("from 'breakwater/redis'"),
);
// Inside the package, so that `breakwater` resolves to the build by the package's own name.
const out = join(root, `test-artifacts/readme-${process.pid}`);
const preludeSource = readFileSync(join(root, 'test/readme/prelude.mts'), 'utf8');
const preludeNames = [...preludeSource.matchAll(/^export (?:const|interface) (\w+)/gm)].map(
  (m) => m[1]!,
);
const libraryNames = Object.keys(library);
const DONE = 'README-BLOCK-DONE';
/** `expression; // value` where the value is a literal, perhaps followed by `: explanation`. */
const SHOWN = /^(\s*)(\S[^;]*?);\s*\/\/\s*(true|false|-?\d+|'[^']*')(?::.*)?\s*$/;

function fileOf(block: ReadmeBlock): string {
  return `block-${block.line}`;
}

/** The block as a module: the names it uses but neither imports nor declares are imported. */
function moduleOf(block: ReadmeBlock): string {
  const code = block.code
    .split('\n')
    .map((text, i) => {
      const shown = SHOWN.exec(text);
      if (!shown || /^(const|let|var|import|export|return)\b/.test(shown[2]!)) return text;
      return `${shown[1]}readmeShows(${shown[2]}, ${shown[3]}, ${block.line + 1 + i});`;
    })
    .join('\n');
  const imported = new Set<string>();
  for (const m of code.matchAll(
    /import\s+(?:type\s+)?(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from/g,
  )) {
    if (m[1]) imported.add(m[1]);
    for (const part of (m[2] ?? '').split(',')) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (name) imported.add(name.replace(/^type\s+/, ''));
    }
  }
  const declared = new Set(
    [...code.matchAll(/\b(?:const|let|var|class|function|interface|type)\s+(\w+)/g)].map(
      (m) => m[1]!,
    ),
  );
  const used = new Set(code.match(/\b[A-Za-z_$][\w$]*\b/g) ?? []);
  const free = (name: string) => used.has(name) && !imported.has(name) && !declared.has(name);
  const fromPrelude = preludeNames.filter(free);
  const fromLibrary = libraryNames.filter((n) => free(n) && !fromPrelude.includes(n));
  const header = [
    fromLibrary.length > 0 ? `import { ${fromLibrary.join(', ')} } from 'breakwater';` : '',
    fromPrelude.length > 0 ? `import { ${fromPrelude.join(', ')} } from './prelude.mjs';` : '',
  ];
  return `${header.join('\n')}\n${code}\nexport {};\n`;
}

let compileErrors = '';

describe('README', () => {
  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/index.js'))) {
      throw new Error('The README blocks run against the build: run `npm run build` first.');
    }
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'prelude.mts'), preludeSource);
    for (const block of tsBlocks) writeFileSync(join(out, `${fileOf(block)}.mts`), moduleOf(block));
    writeFileSync(
      join(out, 'run.mjs'),
      [
        "import { pathToFileURL } from 'node:url';",
        "process.on('unhandledRejection', (e) => { console.error('unhandled rejection', e); process.exit(3); });",
        'await import(pathToFileURL(process.argv[2]).href);',
        // A rejection left unhandled surfaces within a turn or two of the event loop.
        'await new Promise((r) => setTimeout(r, 50));',
        `console.log('${DONE}');`,
        'process.exit(0);',
      ].join('\n'),
    );
    compileErrors = (await typeCheck(out)).join('\n');
  }, 120_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('has TypeScript blocks to check', () => {
    expect(tsBlocks.length).toBeGreaterThan(10);
  });

  for (const block of tsBlocks) {
    describe(`the block at line ${block.line} (${block.heading})`, () => {
      it('type checks', () => {
        const mine = compileErrors
          .split('\n')
          .filter((l) => l.startsWith(`${fileOf(block)}.mts`) || l.startsWith('prelude.mts'));
        expect(mine.join('\n')).toBe('');
      });

      it('runs to its end without an error or an unhandled rejection', async () => {
        const exit = await runNodeScript('run.mjs', [`${fileOf(block)}.mjs`], out, 30_000);
        expect(exit.stderr).toBe('');
        expect(exit.stdout).toContain(DONE);
        expect(exit.code).toBe(0);
      }, 40_000);
    });
  }

  it('shows the ConfigError message the registry really gives', () => {
    const shown = blocks.find((b) => b.lang === '' && b.code.includes('Invalid registry config'));
    expect(shown).toBeDefined();
    let message = '';
    try {
      new Registry({
        circuitBreakers: { payments: { breakDurtion: '30s', failureRateThreshold: 1.5 } },
      } as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message.trim()).toBe(shown!.code.trim());
  });
});
