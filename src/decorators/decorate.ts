import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { MethodPlan, makeWrapper, planOf, type Spec } from './plan.js';
import type { SignalArgument } from './types.js';

/** A decorator's contribution, made anew for each method it decorates. */
export interface SpecSource {
  /** `@name(...)`, for messages. */
  readonly label: string;
  readonly spec: () => Spec;
  readonly signal: SignalArgument | undefined;
}

type AnyFunction = (...args: unknown[]) => unknown;

/**
 * The decorator function: tells a TC39 decorator call `(value, context)` from a legacy one
 * `(target, key, descriptor)` by its arguments, and refuses anything that is not a method.
 */
export function makeDecorator(source: SpecSource): (...args: unknown[]) => unknown {
  return function decorator(...args: unknown[]): unknown {
    const [a, b, c] = args;
    if (args.length === 2 && isContext(b)) {
      if (b.kind !== 'method') throw notAMethod(source.label, describeKind(b.kind), b.name);
      if (typeof a !== 'function') throw notAMethod(source.label, 'not a function', b.name);
      return decorate(a as AnyFunction, source, b.name);
    }
    if (
      args.length === 3 &&
      (typeof b === 'string' || typeof b === 'symbol') &&
      (typeof a === 'object' || typeof a === 'function') &&
      a !== null
    ) {
      if (typeof c === 'number') throw notAMethod(source.label, 'a parameter', b);
      if (typeof c !== 'object' || c === null) throw notAMethod(source.label, 'a field', b);
      const descriptor = c as PropertyDescriptor;
      if (descriptor.get !== undefined || descriptor.set !== undefined) {
        const what =
          descriptor.set === undefined
            ? 'a getter'
            : descriptor.get === undefined
              ? 'a setter'
              : 'an accessor';
        throw notAMethod(source.label, what, b);
      }
      if (typeof descriptor.value !== 'function') throw notAMethod(source.label, 'a field', b);
      descriptor.value = decorate(descriptor.value as AnyFunction, source, b);
      return descriptor;
    }
    if (args.length === 1 && typeof a === 'function') {
      throw notAMethod(source.label, 'a class', a.name);
    }
    if (args.length === 3 && typeof c === 'number') {
      throw notAMethod(source.label, 'a parameter', b);
    }
    throw new UsageError(
      `@${source.label}(...) decorates class methods; it was called with ${args.length} argument(s) that are not a method's`,
    );
  };
}

function decorate(fn: AnyFunction, source: SpecSource, name: unknown): AnyFunction {
  const tag = Object.prototype.toString.call(fn);
  if (tag === '[object GeneratorFunction]' || tag === '[object AsyncGeneratorFunction]') {
    throw notAMethod(source.label, 'a generator method', name);
  }
  const inner = planOf(fn);
  const spec = source.spec();
  const shown = show(name);
  if (inner === undefined) return makeWrapper(new MethodPlan(fn, shown, [spec], source.signal));
  return makeWrapper(
    new MethodPlan(
      inner.original,
      shown,
      [spec, ...inner.specs],
      mergeSignal(source, inner.signal, shown),
    ),
  );
}

function mergeSignal(
  source: SpecSource,
  inner: SignalArgument | undefined,
  name: string,
): SignalArgument | undefined {
  const outer = source.signal;
  if (outer === undefined) return inner;
  if (inner === undefined || inner === outer) return outer;
  throw new OptionsError(
    'signal',
    outer,
    `the same as the \`signal\` another decorator of \`${name}\` gives (${String(inner)}), as a method has one pipeline`,
  );
}

interface DecoratorContextLike {
  readonly kind: string;
  readonly name: unknown;
}

function isContext(value: unknown): value is DecoratorContextLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string'
  );
}

function describeKind(kind: string): string {
  switch (kind) {
    case 'getter':
      return 'a getter';
    case 'setter':
      return 'a setter';
    case 'accessor':
      return 'an accessor';
    case 'field':
      return 'a field';
    case 'class':
      return 'a class';
    default:
      return `a ${kind}`;
  }
}

function show(name: unknown): string {
  return typeof name === 'symbol' ? name.toString() : String(name);
}

function notAMethod(label: string, what: string, name: unknown): UsageError {
  return new UsageError(
    `@${label}(...) decorates methods only, but \`${show(name)}\` is ${what}; put it on a method (for a getter, decorate a method the getter calls)`,
  );
}
