// @ts-check
/**
 * The API report: for each entry point of the package, every name its published declarations
 * export, with its kind and a digest of its declaration, read from the built dist/ with the
 * TypeScript compiler. The reports are committed under api/; test/package/api-report.test.ts
 * fails when the built package differs from them, so a change to the public surface is a diff
 * in review. `npm run api:report` builds and rewrites them.
 *
 * A digest covers the declaration printed without comments, and the declarations it reaches
 * that its entry does not export by name (a kind descriptor's resolved options type), so a
 * change to anything a user's types can see changes the digest of each export that shows it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Where the committed reports are, relative to the repository root. */
export const reportDir = 'api';

/** @typedef {{ name: string, kind: string, digest: string }} ApiRow */
/** @typedef {{ subpath: string, file: string, rows: ApiRow[] }} ApiReport */

/** `'.'` -> `index`, `'./testing'` -> `testing`: the report's file name, without extension. */
export function reportName(/** @type {string} */ subpath) {
  return subpath === '.' ? 'index' : subpath.slice(2);
}

/** The entry points (tsdown.config.ts `entries`), read without compiling the config. */
function entrySubpaths() {
  const config = readFileSync(join(root, 'tsdown.config.ts'), 'utf8');
  const block = /export const entries = \{([^}]*)\}/.exec(config);
  if (!block) throw new Error('tsdown.config.ts: no `export const entries = { ... }`');
  return [...block[1].matchAll(/'(\.[^']*)':/g)].map((m) => m[1]);
}

/** The declaration file an entry's types are in: dist/<name>/index.d.ts or .d.cts. */
function declarationFile(/** @type {string} */ subpath, /** @type {'.d.ts' | '.d.cts'} */ ext) {
  return join(root, 'dist', subpath === '.' ? `index${ext}` : `${subpath.slice(2)}/index${ext}`);
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** What a declaration is, as the report names it. */
function kindOf(/** @type {ts.Declaration} */ node) {
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isEnumDeclaration(node)) return 'enum';
  if (ts.isModuleDeclaration(node)) return 'namespace';
  if (ts.isVariableDeclaration(node)) return 'const';
  return ts.SyntaxKind[node.kind];
}

/**
 * The reports of every entry, from the declaration files with extension `ext` (the ESM .d.ts
 * by default; the CommonJS .d.cts hold the same declarations).
 * @param {'.d.ts' | '.d.cts'} [ext]
 * @returns {ApiReport[]}
 */
export function apiReports(ext = '.d.ts') {
  const subpaths = entrySubpaths();
  const files = subpaths.map((s) => declarationFile(s, ext));
  const program = ts.createProgram(files, {
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const dist = join(root, 'dist');

  /** @param {ts.Symbol} symbol */
  const resolve = (symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  /** @param {ts.Declaration} node */
  const ownDeclaration = (node) => node.getSourceFile().fileName.startsWith(dist);
  // Whitespace collapsed, and the `$1` the bundler appends to a name that two chunks declare
  // dropped, so a digest changes with the declaration, not with how dist/ is split.
  // The members of a type literal and of a union in one order: the compiler prints an inferred
  // type's keys and union members in the order it met them, which can change between builds.
  /** @param {ts.Node} node */
  const print = (node) => {
    const file = node.getSourceFile();
    /** @param {ts.Node} n */
    const text = (n) => printer.printNode(ts.EmitHint.Unspecified, n, file);
    /** @param {ts.Node} a @param {ts.Node} b */
    const byText = (a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0);
    /** @type {ts.TransformerFactory<ts.Node>} */
    const ordered = (context) => {
      /** @param {ts.Node} n @returns {ts.Node} */
      const visit = (n) => {
        const v = ts.visitEachChild(n, visit, context);
        if (ts.isTypeLiteralNode(v)) {
          return ts.factory.updateTypeLiteralNode(
            v,
            ts.factory.createNodeArray([...v.members].sort(byText)),
          );
        }
        if (ts.isUnionTypeNode(v)) {
          return ts.factory.updateUnionTypeNode(
            v,
            ts.factory.createNodeArray([...v.types].sort(byText)),
          );
        }
        return v;
      };
      return visit;
    };
    const result = ts.transform(node, [ordered]);
    const printed = text(result.transformed[0]);
    result.dispose();
    return printed.replace(/\s+/g, ' ').replace(/\b([A-Za-z_]\w*)\$\d+\b/g, '$1');
  };

  return subpaths.map((subpath, i) => {
    const source = program.getSourceFile(files[i]);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${files[i]}: not built (run npm run build)`);
    const exported = checker.getExportsOfModule(moduleSymbol);
    const exportedTargets = new Set(exported.map(resolve));

    /**
     * The text a digest covers: `symbol`'s declarations, then those of the symbols they name
     * that the entry does not export (each once).
     * @param {ts.Symbol} symbol
     */
    const digestText = (symbol) => {
      const seen = new Set([symbol]);
      const parts = [];
      const queue = [symbol];
      for (let s = queue.shift(); s; s = queue.shift()) {
        for (const node of s.declarations ?? []) {
          if (!ownDeclaration(node)) continue;
          parts.push(print(node));
          /** @param {ts.Node} n */
          const visit = (n) => {
            if (ts.isIdentifier(n)) {
              const named = checker.getSymbolAtLocation(n);
              const target = named && resolve(named);
              if (
                target &&
                !seen.has(target) &&
                !exportedTargets.has(target) &&
                target.declarations?.some(ownDeclaration) &&
                !target.declarations.some((d) => d === n.parent || isMemberOf(d, node))
              ) {
                seen.add(target);
                queue.push(target);
              }
            }
            ts.forEachChild(n, visit);
          };
          ts.forEachChild(node, visit);
        }
      }
      return parts.join('\n');
    };

    const rows = exported
      .map((symbol) => {
        const target = resolve(symbol);
        const declarations = (target.declarations ?? []).filter(ownDeclaration);
        const kinds = [...new Set(declarations.map(kindOf))].join(', ');
        const digest = createHash('sha256').update(digestText(target)).digest('hex').slice(0, 12);
        return { name: symbol.name, kind: kinds, digest };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { subpath, file: `${reportDir}/${reportName(subpath)}.api.md`, rows };
  });
}

/** True when `declaration` lies inside `container` (a member, a parameter): not a new name. */
function isMemberOf(/** @type {ts.Node} */ declaration, /** @type {ts.Node} */ container) {
  return (
    declaration.getSourceFile() === container.getSourceFile() &&
    declaration.pos >= container.pos &&
    declaration.end <= container.end
  );
}

/** The committed form of `report`: a Markdown table, one export per line. */
export function formatReport(/** @type {ApiReport} */ report) {
  const name = report.subpath === '.' ? 'breakwater' : `breakwater/${report.subpath.slice(2)}`;
  return [
    `# API report: \`${name}\``,
    '',
    `${report.rows.length} exports. Generated from the built declarations by`,
    '`npm run api:report`; test/package/api-report.test.ts fails until a change to them is',
    'accepted here. The digest covers the declaration without comments, and the declarations it',
    'names that this entry does not export.',
    '',
    '| Export | Kind | Digest |',
    '| --- | --- | --- |',
    ...report.rows.map((r) => `| ${r.name} | ${r.kind} | ${r.digest} |`),
    '',
  ].join('\n');
}

/** The rows of a committed report (see {@link formatReport}). */
export function parseReport(/** @type {string} */ text) {
  return text
    .split('\n')
    .filter(
      (line) => line.startsWith('| ') && !line.startsWith('| Export') && !line.startsWith('| ---'),
    )
    .map((line) => {
      const [name, kind, digest] = line.slice(2, -2).split(' | ');
      return { name, kind, digest };
    });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  mkdirSync(join(root, reportDir), { recursive: true });
  for (const report of apiReports()) {
    writeFileSync(join(root, report.file), formatReport(report));
    console.log(`${report.file}: ${report.rows.length} exports`);
  }
}
