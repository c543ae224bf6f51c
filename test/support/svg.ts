/**
 * A strict reader of the small XML subset an SVG chart uses (elements, double-quoted
 * attributes, text, the five predefined entities, no comments, CDATA or doctype), for tests of
 * generated charts: it throws on anything malformed, so a chart it reads is well-formed XML.
 */

/** One element: its name, attributes, child elements and own text (entities decoded). */
export interface SvgElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: SvgElement[];
  text: string;
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
};

function decode(text: string, at: number): string {
  return text.replace(/&([^;]*);|&/g, (whole, name: string | undefined) => {
    const value = name === undefined ? undefined : ENTITIES[name];
    if (value === undefined) throw new SyntaxError(`Bad entity ${whole} near ${at}`);
    return value;
  });
}

const NAME = '[A-Za-z_][\\w.:-]*';
const TAG = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}="[^"<]*")*)\\s*(/?)>`);
const ATTRIBUTE = new RegExp(`(${NAME})="([^"<]*)"`, 'g');

/** Parses `text` as one root element, optionally after an XML declaration. */
export function parseSvg(text: string): SvgElement {
  const stack: SvgElement[] = [];
  let root: SvgElement | undefined;
  let i = text.startsWith('<?xml') ? text.indexOf('?>') + 2 : 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt === -1 ? text.length : lt);
    if (chunk.trim() !== '') {
      const parent = stack[stack.length - 1];
      if (parent === undefined) throw new SyntaxError(`Text outside the root near ${i}`);
      parent.text += decode(chunk, i);
    }
    if (lt === -1) break;
    const match = TAG.exec(text.slice(lt));
    if (match === null)
      throw new SyntaxError(`Malformed tag near ${lt}: ${text.slice(lt, lt + 40)}`);
    const [whole, closing, name, attrs, selfClosing] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
    ];
    if (closing && (attrs !== '' || selfClosing !== '')) {
      throw new SyntaxError(`Malformed closing tag near ${lt}: ${whole}`);
    }
    if (closing) {
      const open = stack.pop();
      if (open?.name !== name)
        throw new SyntaxError(`</${name}> closes <${open?.name}> near ${lt}`);
    } else {
      const attributes: Record<string, string> = {};
      for (const [, key, value] of attrs.matchAll(ATTRIBUTE)) {
        if (key! in attributes) throw new SyntaxError(`Attribute ${key} twice near ${lt}`);
        attributes[key!] = decode(value!, lt);
      }
      const element: SvgElement = { name, attributes, children: [], text: '' };
      const parent = stack[stack.length - 1];
      if (parent !== undefined) parent.children.push(element);
      else if (root === undefined) root = element;
      else throw new SyntaxError(`A second root <${name}> near ${lt}`);
      if (!selfClosing) stack.push(element);
    }
    i = lt + whole.length;
  }
  if (stack.length > 0) throw new SyntaxError(`<${stack[stack.length - 1]!.name}> is never closed`);
  if (root === undefined) throw new SyntaxError('No element');
  return root;
}

/** Every element below `element` (itself included), depth first, that `match` accepts. */
export function findAll(element: SvgElement, match: (e: SvgElement) => boolean): SvgElement[] {
  const found = match(element) ? [element] : [];
  for (const child of element.children) found.push(...findAll(child, match));
  return found;
}
