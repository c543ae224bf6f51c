import type { LibraryKindTypes, OptionsArgs, StepKindName } from '../policies/kindTable.js';
import type { Registry } from '../registry/Registry.js';

/**
 * Where a decorated method takes an `AbortSignal`:
 * - `'last'` (default): the last argument of a call, when it is an `AbortSignal`;
 * - a number: the argument at that index (the method always receives a signal there when the
 *   pipeline holds a timeout, even if the caller passed none);
 * - `false`: no argument is a signal.
 */
export type SignalArgument = 'last' | number | false;

/** Decorator options when the decorator is given policy options (a new policy). */
export interface PolicyDecoratorOptions {
  /**
   * One policy per object (per class object for a static method) instead of one shared by
   * every object of the class. @default false
   */
  readonly perInstance?: boolean;
  /** Where the method takes an `AbortSignal`. @default 'last' */
  readonly signal?: SignalArgument;
}

/** Decorator options when the decorator is given a policy object or a pipeline. */
export interface SharedDecoratorOptions {
  /** Where the method takes an `AbortSignal`. @default 'last' */
  readonly signal?: SignalArgument;
}

/** Decorator options when the decorator is given a registry name. */
export interface NamedDecoratorOptions {
  /** The registry the name is looked up in. @default defaultRegistry */
  readonly registry?: Registry;
  /** Where the method takes an `AbortSignal`. @default 'last' */
  readonly signal?: SignalArgument;
}

/** Decorator options of a registry name for a policy kind the registry keeps per key. */
export interface KeyedDecoratorOptions<A extends unknown[] = never[]>
  extends NamedDecoratorOptions {
  /**
   * Computes a key from the call's arguments (with `this` the object called); each key gets its
   * own instance from the registry (`registry.getKeyed(kind, name, key)` on each call), e.g. one
   * per downstream host. A key that is not a string of at most 1,024 characters fails the call
   * with a `UsageError`. Only for a kind the registry keeps per key.
   */
  readonly key?: (...args: A) => string;
}

/**
 * A method decorator that works both as a TC39 (standard) decorator and as a legacy
 * `experimentalDecorators` one. It leaves the method's type as it is: `this`, parameters,
 * return type and overloads. `R` is what the method must return (a promise for policies that
 * wait); `A` the leading parameters a `key` function reads.
 */
export interface PolicyDecorator<R = unknown, A extends unknown[] = never[]> {
  /** As a standard decorator. @typeParam F the decorated method's type */
  <This, F extends (this: This, ...args: [...A, ...never[]]) => R>(
    value: F,
    context: ClassMethodDecoratorContext<This, F>,
  ): F;
  /** As a legacy decorator. @typeParam F the decorated method's type */
  <F extends (...args: [...A, ...never[]]) => R>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<F>,
  ): void;
}

/**
 * The decorator of one policy kind, made by `kindDecorator(kind)`. Its argument is a registry
 * name (per key with `{ key }`), an instance of the kind `P`, or options `O` for a new instance.
 */
export interface KindDecorator<P extends object, O = unknown> {
  <A extends unknown[] = never[]>(
    name: string,
    options?: KeyedDecoratorOptions<A>,
  ): PolicyDecorator<unknown, A>;
  (policy: P, options?: SharedDecoratorOptions): PolicyDecorator;
  (options?: O, decoratorOptions?: PolicyDecoratorOptions): PolicyDecorator;
}

/**
 * `unknown` when a method `F`'s result (awaited) admits a fallback's value `T`, else
 * an object type no method is, which makes the decorator's use an error that names `T`. An
 * untyped value (`unknown`) is not checked.
 */
export type AdmitsFallback<F, T> = unknown extends T
  ? unknown
  : F extends (...args: never[]) => infer Result
    ? [T] extends [Awaited<Result>]
      ? unknown
      : { readonly 'the fallback value is not of the method result type': T }
    : unknown;

/**
 * The decorator `@fallback` makes: a {@link PolicyDecorator} that also requires the method's
 * result to admit the fallback's value `T`. A decorator cannot change the type of the method
 * it decorates, so the method declares what it may resolve: `Promise<User | null>` under
 * `@fallback({ value: null })`. (`A` is as for {@link PolicyDecorator}.)
 */
export interface FallbackDecorator<T, A extends unknown[] = never[]> {
  /** As a standard decorator. @typeParam F the decorated method's type */
  <This, F extends (this: This, ...args: [...A, ...never[]]) => unknown>(
    value: F & AdmitsFallback<F, T>,
    context: ClassMethodDecoratorContext<This, F>,
  ): F;
  /** As a legacy decorator. @typeParam F the decorated method's type */
  <F extends (...args: [...A, ...never[]]) => unknown>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<F> & AdmitsFallback<F, T>,
  ): void;
}

/** What a method under the decorator of kind `K` must return: a promise for kinds that settle later. */
type DecoratedResult<K extends StepKindName> = LibraryKindTypes[K]['settlesLater'] extends true
  ? PromiseLike<unknown>
  : unknown;

/**
 * The decorator of a library kind `K` (`@circuitBreaker`, `@retry`, ...). Its argument is one of:
 * - options, as the kind's factory takes them: a new instance for this method, shared by every
 *   object of the class (one per object with `{ perInstance: true }`);
 * - a registry name: the kind's named instance (the default registry unless `{ registry }`),
 *   or, for a kind kept per key, one instance per key with `{ key: (...args) => string }`;
 * - an instance of the kind, used as it is.
 */
export interface LibraryDecorator<K extends StepKindName> {
  <A extends unknown[] = never[]>(
    name: string,
    options?: LibraryKindTypes[K]['keyed'] extends true
      ? KeyedDecoratorOptions<A>
      : NamedDecoratorOptions,
  ): PolicyDecorator<DecoratedResult<K>, A>;
  <T>(
    policy: LibraryKindTypes<T>[K]['policy'],
    options?: SharedDecoratorOptions,
  ): PolicyDecorator<DecoratedResult<K>>;
  <T = unknown>(
    ...args: OptionsArgs<K, T, never, [decoratorOptions?: PolicyDecoratorOptions]>
  ): PolicyDecorator<DecoratedResult<K>>;
}
