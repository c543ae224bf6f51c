/**
 * @internal A key that exists for the types only: a policy typed by the results it judges
 * (`Retry<T>`, a `CircuitBreaker<T>`) declares an optional property of type `T` under it, never
 * set, from which `pipeline(...)` reads the result type its functions must return.
 */
export const RESULT_TYPE: unique symbol = Symbol('breakwater.resultType') as never;

/** @internal The result type a policy declares under {@link RESULT_TYPE}, else unknown. */
export type ResultTypeOf<P> = P extends { readonly [RESULT_TYPE]?: infer T } ? T : unknown;
