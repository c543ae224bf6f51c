/** A small reader of the Prometheus text exposition format, to check `/metrics` answers. */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a text exposition; `# HELP` and `# TYPE` lines are returned apart. */
export function parsePrometheus(text: string): {
  samples: Sample[];
  types: Map<string, string>;
  helps: Map<string, string>;
} {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const helps = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta !== null) {
      (meta[1] === 'HELP' ? helps : types).set(meta[2]!, meta[3]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    samples.push(parseSample(line));
  }
  return { samples, types, helps };
}

function parseSample(line: string): Sample {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
  if (name === undefined) throw new Error(`Not a sample line: ${line}`);
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
      if (label === null) throw new Error(`Bad label at ${at} in: ${line}`);
      at += label[0].length;
      let value = '';
      while (line[at] !== '"') {
        if (at >= line.length) throw new Error(`Unterminated label value in: ${line}`);
        if (line[at] === '\\') {
          const escaped = line[at + 1];
          value += escaped === 'n' ? '\n' : escaped;
          at += 2;
        } else value += line[at++];
      }
      at++;
      labels[label[1]!] = value;
      if (line[at] === ',') at++;
    }
    at++;
  }
  const value = Number(line.slice(at).trim().split(' ')[0]);
  if (Number.isNaN(value) && !line.endsWith('NaN')) throw new Error(`Bad value in: ${line}`);
  return { name, labels, value };
}

/** The value of the one sample named `name` whose labels include `labels`. */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Readonly<Record<string, string>>,
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match`);
  return found[0]?.value;
}
