/**
 * Programs a doc shows, written out as files a user would have and run as they would run
 * them: TypeScript blocks type checked (strict, `nodenext`) against the BUILT package and the
 * other packages installed beside it, JavaScript blocks as they are; each then runs in a
 * process of its own, and what it prints is what the doc's output block must show.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ChildExit, runNodeScript } from './child.js';
import type { ReadmeBlock } from './readme.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(
  dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
);

/** One program of a doc, as a file. */
export interface DocProgram {
  /** The file's name without its extension, unique in its folder. */
  readonly name: string;
  readonly block: ReadmeBlock;
}

/** A folder of programs written out and compiled. */
export interface ProgramFolder {
  readonly dir: string;
  /** The compiler's complaints, one line each (empty when all type check). */
  readonly compileErrors: readonly string[];
}

const extension = (block: ReadmeBlock): string => (block.lang === 'ts' ? '.mts' : '.mjs');

/**
 * Writes `programs` into a fresh folder of test-artifacts/ named after `name` (inside the
 * package, so that `breakwater` resolves to its build by the package's own name) and type
 * checks the TypeScript ones, emitting `.mjs` files beside them.
 */
export async function writePrograms(
  name: string,
  programs: readonly DocProgram[],
): Promise<ProgramFolder> {
  if (!existsSync(join(root, 'dist/index.js'))) {
    throw new Error('Doc programs run against the build: run `npm run build` first.');
  }
  const dir = join(root, 'test-artifacts', `${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const p of programs) {
    writeFileSync(join(dir, `${p.name}${extension(p.block)}`), `${p.block.code}\nexport {};\n`);
  }
  const compileErrors = programs.some((p) => p.block.lang === 'ts') ? await typeCheck(dir) : [];
  return { dir, compileErrors };
}

/**
 * Type checks the `.mts` files of `dir` as a user's project would (strict, `nodenext`, the
 * package's own `@types`), emitting `.mjs` files beside them even when they have errors.
 * Returns the compiler's complaints, one line each (empty when all type check).
 */
export async function typeCheck(dir: string): Promise<string[]> {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
        noEmitOnError: false,
        pretty: false,
      },
      include: ['*.mts'],
    }),
  );
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
      cwd: dir,
    });
    return [];
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error)
      .split('\n')
      .filter((l) => l.trim() !== '');
  }
}

/** The compiler's complaints about one program. */
export function errorsOf(folder: ProgramFolder, program: DocProgram): string[] {
  return folder.compileErrors.filter((l) => l.startsWith(`${program.name}.mts`));
}

/** Runs one program of the folder to its end (at most `limitMs`). */
export function runProgram(
  folder: ProgramFolder,
  program: DocProgram,
  limitMs = 30_000,
): Promise<ChildExit> {
  return runNodeScript(`${program.name}.mjs`, [], folder.dir, limitMs);
}

/**
 * Writes a copy of a compiled program that imports `to` where it imported `from` (another
 * version of a package, installed under an alias) and returns it as a program of its own.
 */
export function withImport(
  folder: ProgramFolder,
  program: DocProgram,
  from: string,
  to: string,
): DocProgram {
  const name = `${program.name}-${to}`;
  const code = readFileSync(join(folder.dir, `${program.name}.mjs`), 'utf8');
  const swapped = code.replaceAll(`from '${from}'`, `from '${to}'`);
  if (swapped === code) throw new Error(`${program.name} does not import ${from}`);
  writeFileSync(join(folder.dir, `${name}.mjs`), swapped);
  return { name, block: program.block };
}

/** Deletes the folder. */
export function removePrograms(folder: ProgramFolder | undefined): void {
  if (folder !== undefined) rmSync(folder.dir, { recursive: true, force: true });
}
