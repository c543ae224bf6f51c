/**
 * The migration guides (docs/migrating/) show each program twice, written with the other
 * library and with breakwater, and what they print. Every program runs here: the other
 * library's against the real package (cockatiel, opossum, p-retry, installed as dev
 * dependencies at the versions the guides name), breakwater's against its build. Where a
 * guide shows one output for both, both must print it; where it shows one per library (a
 * difference a port trips on), each must print its own and the two must differ.
 *
 * The cockatiel programs run against cockatiel 3.2.1 as well (installed as `cockatiel3`), which
 * the guide says reads the same.
 *
 * Blocks are marked by words after the fence's language:
 * ```` ```ts program=retries runs=cockatiel ```` is a program,
 * ```` ```text output=retries ```` what both versions print,
 * ```` ```text output=retries runs=cockatiel ```` what one of them prints.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DocProgram,
  errorsOf,
  type ProgramFolder,
  removePrograms,
  runProgram,
  withImport,
  writePrograms,
} from '../support/docPrograms.js';
import { markdownBlocks, type ReadmeBlock } from '../support/readme.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const GUIDES: readonly {
  readonly file: string;
  readonly peer: string;
  /** An older version the guide says reads the same, installed under this alias. */
  readonly older?: string;
}[] = [
  { file: 'from-cockatiel.md', peer: 'cockatiel', older: 'cockatiel3' },
  { file: 'from-opossum.md', peer: 'opossum' },
  { file: 'from-p-retry.md', peer: 'p-retry' },
];
const installed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

for (const { file, peer, older } of GUIDES) {
  const path = join(root, 'docs/migrating', file);
  const text = readFileSync(path, 'utf8');
  const blocks = markdownBlocks(path);
  const programs: DocProgram[] = blocks
    .filter((b) => b.attrs.program !== undefined)
    .map((block) => ({ name: `${block.attrs.program}-${block.attrs.runs}`, block }));
  const ids = [...new Set(programs.map((p) => p.block.attrs.program!))];
  const outputs = blocks.filter((b) => b.attrs.output !== undefined);
  const shown = (id: string, runs: string): ReadmeBlock | undefined =>
    outputs.find((b) => b.attrs.output === id && b.attrs.runs === runs) ??
    outputs.find((b) => b.attrs.output === id && b.attrs.runs === undefined);
  let folder: ProgramFolder | undefined;

  describe(`docs/migrating/${file}`, () => {
    beforeAll(async () => {
      folder = await writePrograms(`migrating-${peer}`, programs);
    }, 120_000);
    afterAll(() => removePrograms(folder));

    it(`names the ${peer} version it was checked against, the one installed`, () => {
      expect(text).toContain(`${peer} ${installed.devDependencies[peer]}`);
    });

    it('shows programs that say the same thing and programs that name a difference', () => {
      const same = ids.filter((id) => outputs.some((o) => o.attrs.output === id && !o.attrs.runs));
      expect(same.length).toBeGreaterThanOrEqual(1);
      expect(ids.length - same.length).toBeGreaterThanOrEqual(1);
    });

    it(`marks each ${peer} program as importing ${peer} itself`, () => {
      for (const p of programs.filter((p) => p.block.attrs.runs === peer)) {
        expect(p.block.code, p.name).toContain(`from '${peer}'`);
      }
      for (const p of programs.filter((p) => p.block.attrs.runs === 'breakwater')) {
        expect(p.block.code, p.name).not.toContain(`from '${peer}'`);
      }
    });

    for (const id of ids) {
      describe(`program "${id}"`, () => {
        const mine = programs.filter((p) => p.block.attrs.program === id);

        it(`is shown with ${peer} and with breakwater, and with what each prints`, () => {
          expect(mine.map((p) => p.block.attrs.runs).sort()).toEqual(['breakwater', peer].sort());
          expect(shown(id, peer), `output of ${id} with ${peer}`).toBeDefined();
          expect(shown(id, 'breakwater'), `output of ${id} with breakwater`).toBeDefined();
        });

        it('prints what the guide shows, the same for both or different where it says so', async () => {
          const printed: Record<string, string> = {};
          await Promise.all(
            mine.map(async (p) => {
              const runs = p.block.attrs.runs!;
              if (p.block.lang === 'ts') expect(errorsOf(folder!, p).join('\n')).toBe('');
              const exit = await runProgram(folder!, p);
              expect(exit.killed, `${p.name} still running after 30 s`).toBe(false);
              expect(exit.stderr, p.name).toBe('');
              expect(exit.code, p.name).toBe(0);
              printed[runs] = exit.stdout.trimEnd();
            }),
          );
          const peerShown = shown(id, peer)!;
          const oursShown = shown(id, 'breakwater')!;
          expect(printed[peer], `what the ${peer} program prints`).toBe(peerShown.code.trimEnd());
          expect(printed.breakwater, 'what the breakwater program prints').toBe(
            oursShown.code.trimEnd(),
          );
          if (peerShown === oursShown) expect(printed.breakwater).toBe(printed[peer]);
          else expect(printed.breakwater).not.toBe(printed[peer]);
        }, 60_000);

        if (older !== undefined) {
          const version = installed.devDependencies[older]!.replace(/^npm:[^@]+@/, '');
          it(`prints the same with ${peer} ${version}, the version before`, async () => {
            const p = withImport(
              folder!,
              mine.find((m) => m.block.attrs.runs === peer)!,
              peer,
              older,
            );
            const exit = await runProgram(folder!, p);
            expect(exit.stderr, p.name).toBe('');
            expect(exit.code, p.name).toBe(0);
            expect(exit.stdout.trimEnd()).toBe(shown(id, peer)!.code.trimEnd());
          }, 60_000);
        }
      });
    }
  });
}
