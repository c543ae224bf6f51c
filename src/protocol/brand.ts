import { VERSION } from '../version.js';

/**
 * Brands that let two copies of breakwater in one process (the CommonJS build required by a
 * dependency and the ES module build imported by the application, say) take each other's
 * policies, pipelines and registries. `Symbol.for` gives every copy the same keys, so
 * `instanceof` is answered from the brand rather than the prototype chain, as it is for
 * errors (see BreakwaterError). The copies call into each other's objects, so they must be of
 * one version: an object branded by a copy of another version is refused, and
 * {@link otherCopyNote} says why.
 */
const CLASS: unique symbol = Symbol.for('breakwater.class') as never;
const COPY_VERSION: unique symbol = Symbol.for('breakwater.version') as never;

type Branded = { [CLASS]?: unknown; [COPY_VERSION]?: unknown };

type Class = abstract new (...args: never[]) => object;

/**
 * @internal Brands the instances of `ctor` as `name` of this version, and answers
 * `instanceof ctor` from the brand. Subclasses keep the ordinary `instanceof`.
 */
export function brand(ctor: Class, name: string): void {
  Object.defineProperty(ctor.prototype, CLASS, { value: name });
  Object.defineProperty(ctor.prototype, COPY_VERSION, { value: VERSION });
  Object.defineProperty(ctor, Symbol.hasInstance, {
    value(this: Class, value: unknown): boolean {
      if (this !== ctor) return Function.prototype[Symbol.hasInstance].call(this, value);
      return (
        typeof value === 'object' &&
        value !== null &&
        (value as Branded)[CLASS] === name &&
        (value as Branded)[COPY_VERSION] === VERSION
      );
    },
  });
}

/**
 * @internal For an object branded by a copy of breakwater of another version, a sentence to
 * append to the error that refuses it; '' for anything else.
 */
export function otherCopyNote(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  const name = (value as Branded)[CLASS];
  const version = (value as Branded)[COPY_VERSION];
  if (typeof name !== 'string' || version === VERSION) return '';
  return ` (this is a ${name} from another copy of breakwater, version ${String(version)}, which this copy (${VERSION}) cannot use: install a single version of breakwater)`;
}

/** @internal True for an object branded by this copy of breakwater (one of its classes). */
export function isOwnCopy(value: object): boolean {
  return (
    typeof (value as Branded)[CLASS] === 'string' && (value as Branded)[COPY_VERSION] === VERSION
  );
}

/**
 * @internal True for an instance of the class this copy of breakwater branded `name`: how a
 * policy recognises another policy's class without importing its folder.
 */
export function isBranded(value: unknown, name: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Branded)[CLASS] === name &&
    (value as Branded)[COPY_VERSION] === VERSION
  );
}
