/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: every line must
 * be a HELP or TYPE comment, a sample, or empty, and label values must use only the escapes
 * the format defines (`\\`, `\"`, `\n`). Anything else throws, so a malformed exposition fails
 * the test that reads it.
 */

export interface ParsedSample {
  /** The sample's own name (`x_bucket`, `x_sum`, ... for a histogram). */
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  help: string;
  type: string;
  readonly samples: ParsedSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Families by name, in the order of their first line. */
export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  const family = (name: string): ParsedFamily => {
    let f = families.get(name);
    if (f === undefined) {
      f = { name, help: '', type: 'untyped', samples: [] };
      families.set(name, f);
    }
    return f;
  };
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('The exposition must end with a newline');
  for (const [i, line] of lines.entries()) {
    if (line === '') continue;
    try {
      if (line.startsWith('# HELP ')) {
        const rest = line.slice(7);
        const name = rest.match(NAME)?.[0];
        if (name === undefined || rest[name.length] !== ' ') throw new Error('bad HELP line');
        family(name).help = unescapeHelp(rest.slice(name.length + 1));
      } else if (line.startsWith('# TYPE ')) {
        const [name, type, extra] = line.slice(7).split(' ');
        if (name === undefined || !NAME.test(name) || extra !== undefined) {
          throw new Error('bad TYPE line');
        }
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? '')) {
          throw new Error(`unknown type ${type}`);
        }
        family(name).type = type!;
      } else if (line.startsWith('#')) {
        throw new Error('unexpected comment');
      } else {
        const sample = parseSample(line);
        family(familyOf(sample.name, families)).samples.push(sample);
      }
    } catch (error) {
      throw new Error(`Line ${i + 1} (${JSON.stringify(line)}): ${(error as Error).message}`);
    }
  }
  return families;
}

/** The family a sample belongs to: its own name, or a histogram's base name. */
function familyOf(sampleName: string, families: Map<string, ParsedFamily>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sampleName.endsWith(suffix)) {
      const base = sampleName.slice(0, -suffix.length);
      const type = families.get(base)?.type;
      if (type === 'histogram' || type === 'summary') return base;
    }
  }
  return sampleName;
}

function parseSample(line: string): ParsedSample {
  const name = line.match(NAME)?.[0];
  if (name === undefined) throw new Error('no metric name');
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const labelName = line.slice(at).match(LABEL_NAME)?.[0];
      if (labelName === undefined) throw new Error(`bad label name at ${at}`);
      at += labelName.length;
      if (line.slice(at, at + 2) !== '="') throw new Error(`expected =" at ${at}`);
      at += 2;
      let value = '';
      for (;;) {
        const c = line[at];
        if (c === undefined) throw new Error('unterminated label value');
        if (c === '"') break;
        if (c === '\\') {
          const next = line[at + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else throw new Error(`bad escape \\${next}`);
          at += 2;
        } else {
          value += c;
          at++;
        }
      }
      at++;
      if (Object.hasOwn(labels, labelName)) throw new Error(`label ${labelName} twice`);
      labels[labelName] = value;
      if (line[at] === ',') at++;
      else if (line[at] !== '}') throw new Error(`expected , or } at ${at}`);
    }
    at++;
  }
  if (line[at] !== ' ') throw new Error('expected a space before the value');
  const valueText = line.slice(at + 1);
  if (valueText.includes(' ')) throw new Error('timestamps are not expected');
  return { name, labels, value: parseValue(valueText) };
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) {
    throw new Error(`bad value ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    throw new Error(`bad escape \\${c} in HELP`);
  });
}

/** The value of the one sample of `family` named `name` with exactly `labels`. */
export function sampleValue(
  families: Map<string, ParsedFamily>,
  family: string,
  labels: Record<string, string>,
  name = family,
): number {
  const f = families.get(family);
  if (f === undefined) throw new Error(`No family ${family}`);
  const hits = f.samples.filter((s) => s.name === name && sameLabels(s.labels, labels));
  if (hits.length !== 1) {
    throw new Error(
      `Expected one ${name}${JSON.stringify(labels)}, found ${hits.length} among ${JSON.stringify(f.samples)}`,
    );
  }
  return hits[0]!.value;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}
