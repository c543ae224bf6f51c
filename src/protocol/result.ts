/**
 * A key that exists for the types only: a policy typed by the results it judges
 * (`Retry<T>`, a `CircuitBreaker<T>`) declares an optional property of type `T` under it, never
 * set, from which `pipeline(...)` reads the result type its functions must return.
 */
export const RESULT_TYPE: unique symbol = Symbol('breakwater.resultType') as never;

/** The result type a policy declares under {@link RESULT_TYPE}, else unknown. */
export type ResultTypeOf<P> = P extends { readonly [RESULT_TYPE]?: infer T } ? T : unknown;

/**
 * A key that exists for the types only: a fallback declares an optional property of
 * the type of the value it produces under it, never set, from which `pipeline(...)` reads what
 * its calls may resolve with besides their function's value.
 */
export const FALLBACK_VALUE: unique symbol = Symbol('breakwater.fallbackValue') as never;

/** The value type a fallback declares under {@link FALLBACK_VALUE}, else never. */
export type FallbackValueOf<P> = P extends { readonly [FALLBACK_VALUE]?: infer V } ? V : never;
