/** The fenced code blocks of a Markdown file, with the heading each one sits under. */
export interface CodeBlock {
  /** The fence's info string (`ts`, `sh`, or empty). */
  readonly lang: string;
  readonly code: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The nearest heading above the block, without its `#` marks. */
  readonly heading: string;
}

/** Every fenced block (also those indented inside list items), in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      heading = h[1]!.trim();
      continue;
    }
    const open = /^(\s*)```(\S*)\s*$/.exec(line);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) {
      body.push(lines[j]!.slice(Math.min(indent, lines[j]!.length - lines[j]!.trimStart().length)));
    }
    blocks.push({ lang: open[2]!, code: body.join('\n'), line: i + 1, heading });
    i = j;
  }
  return blocks;
}
