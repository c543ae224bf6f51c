/**
 * Method decorators: `@circuitBreaker`, `@retry`, `@timeout`, `@bulkhead`, `@rateLimit`,
 * `@loadShedder`, `@adaptiveLimit`, `@hedge`, `@chaos` (one per library kind that is a step),
 * `@fallback` and `@usePipeline`; `kindDecorator(kind)` makes the decorator of a policy kind
 * defined outside the library. They work as TC39 decorators and as legacy
 * `experimentalDecorators` ones; stacked on one method they make one pipeline, outermost (top)
 * first.
 *
 * @example
 * ```ts
 * import { circuitBreaker, retry, timeout } from 'breakwater/decorators';
 *
 * class Payments {
 *   @retry({ maxAttempts: 3 })        // outermost: each attempt goes through the breaker
 *   @circuitBreaker('payments')       // a name in the default registry
 *   @timeout(1_000)                   // innermost: a limit per attempt
 *   async charge(id: string, signal?: AbortSignal) { ... }
 * }
 * ```
 * @packageDocumentation
 */
export * from './factories.js';
export { pipelineOf } from './introspect.js';
export { kindDecorator } from './kindDecorator.js';
export type {
  FallbackDecorator,
  KeyedDecoratorOptions,
  KindDecorator,
  LibraryDecorator,
  NamedDecoratorOptions,
  PolicyDecorator,
  PolicyDecoratorOptions,
  SharedDecoratorOptions,
  SignalArgument,
} from './types.js';
