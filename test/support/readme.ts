/**
 * The fenced code blocks of the README (or of any Markdown file), each with the heading it
 * stands under, so tests can compile and run what the docs show rather than a copy of it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's README.md. */
export const README_PATH = fileURLToPath(new URL('../../README.md', import.meta.url));

export interface ReadmeBlock {
  /** Text of the nearest heading above the block, without its `#` marks. */
  readonly heading: string;
  /** The fence's language tag (`ts`, `sh`, ...), or '' when it has none. */
  readonly lang: string;
  /**
   * The `key=value` words written after the language tag (```` ```ts program=retries ````),
   * which tell a docs test what a block is; empty when there are none.
   */
  readonly attrs: Readonly<Record<string, string>>;
  /** The block's lines, without the fences and without the fence's indentation. */
  readonly code: string;
  /** 1-based line of the opening fence in the file. */
  readonly line: number;
}

/**
 * Every fenced code block of a Markdown text, in order. Fences may be indented (a block inside
 * a list item); headings inside code blocks are not headings.
 */
export function codeBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = markdown.split('\n');
  let heading = '';
  let open: {
    indent: number;
    fence: string;
    lang: string;
    attrs: Record<string, string>;
    line: number;
    body: string[];
  } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (open !== null) {
      const close = /^(\s*)(`{3,}|~{3,})\s*$/.exec(line);
      if (close !== null && close[2]!.startsWith(open.fence)) {
        const { lang, attrs } = open;
        blocks.push({ heading, lang, attrs, code: open.body.join('\n'), line: open.line });
        open = null;
      } else {
        const indent = open.indent;
        open.body.push(line.slice(Math.min(indent, line.length - line.trimStart().length)));
      }
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)(.*)$/.exec(line);
    if (fence !== null) {
      open = {
        indent: fence[1]!.length,
        fence: fence[2]!,
        lang: fence[3]!,
        attrs: Object.fromEntries(
          [...fence[4]!.matchAll(/([\w-]+)=([\w.-]+)/g)].map((m) => [m[1]!, m[2]!]),
        ),
        line: i + 1,
        body: [],
      };
      continue;
    }
    const title = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (title !== null) heading = title[1]!;
  }
  if (open !== null) throw new Error(`Code block opened on line ${open.line} is never closed`);
  return blocks;
}

/** The README's code blocks, all of them or those under the heading `heading`. */
export function readmeBlocks(heading?: string, lang?: string): ReadmeBlock[] {
  return markdownBlocks(README_PATH, heading, lang);
}

/**
 * The code blocks of the Markdown file at `path`, all of them or those under the heading
 * `heading` (and in the language `lang`).
 */
export function markdownBlocks(path: string, heading?: string, lang?: string): ReadmeBlock[] {
  return codeBlocks(readFileSync(path, 'utf8')).filter(
    (b) =>
      (heading === undefined || b.heading === heading) && (lang === undefined || b.lang === lang),
  );
}
