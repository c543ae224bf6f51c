import { onlyArguments } from '../../validation/validate.js';
import {
  type FetchHandler,
  fetchAdapter,
  type HonoMiddleware,
  honoAdapter,
} from './fetchAdapters.js';
import { GuardCore } from './GuardCore.js';
import {
  type ConnectErrorMiddleware,
  type ConnectMiddleware,
  connectAdapter,
  connectErrorAdapter,
  type FastifyErrorHandler,
  type FastifyPlugin,
  fastifyAdapter,
  fastifyErrorAdapter,
  type NodeHandler,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeAdapter,
} from './nodeAdapters.js';
import type { ServiceGuardOptions } from './options.js';

/** The guard of a service's inbound requests, for each kind of server. */
export interface ServiceGuard {
  /** Middleware for Express 5 and any connect-style stack: `app.use(guard.connect)`. */
  readonly connect: ConnectMiddleware;
  /**
   * Express error middleware, added after the routes: `app.use(guard.errors)`. Answers a
   * handler's failure that the library caused (504, 503 with `Retry-After`, 502; see
   * {@link ServiceGuardOptions.errors}) and passes any other error on with `next(error)`, as
   * it does once the response has started (Express then ends the connection). Express 5 sends
   * a rejected async handler's error here; Express 4 needs `next(error)` from the handler.
   */
  readonly errors: ConnectErrorMiddleware;
  /**
   * A Fastify 5 plugin that applies to the instance it is registered on, not a child context:
   * `await fastify.register(guard.fastify)`. With `errors` on (the default) it also sets
   * {@link fastifyErrorHandler} as the instance's error handler, unless one was set before
   * the plugin was registered (it never replaces the user's: call `fastifyErrorHandler` from
   * yours, or set it in yours' place). One set after it replaces it, with Fastify's warning.
   */
  readonly fastify: FastifyPlugin;
  /**
   * An error handler for `fastify.setErrorHandler(guard.fastifyErrorHandler)`: answers a
   * failure the library caused and throws any other error on to the parent scope's handler
   * (Fastify's own by default), as it does once the response has started.
   */
  readonly fastifyErrorHandler: FastifyErrorHandler;
  /**
   * Hono middleware: `app.use(guard.hono)`. With `errors` on, a handler's failure that the
   * library caused is answered in place of `app.onError`'s response (which still runs).
   */
  readonly hono: HonoMiddleware;
  /**
   * `handler` guarded, for `http.createServer(guard.node(handler))`. A handler that throws or
   * rejects gets, when nothing was sent yet, the answer to a failure the library caused (with
   * `errors` on) or a 500; once the response has started, its connection is destroyed. The
   * error goes to `onError` in every case.
   */
  node<Req extends NodeRequestLike, Res extends NodeResponseLike>(
    handler: NodeHandler<Req, Res>,
    onError?: (error: unknown) => void,
  ): NodeHandler<Req, Res>;
  /**
   * A fetch-style `handler` guarded (`(Request, ...) => Response`), for Bun, Deno, workerd and
   * Hono's `app.fetch`. The client's address comes from the handler's second argument where the
   * runtime gives one (Deno's handler info, Bun's server, Hono's Node server env). A handler
   * that rejects with a failure the library caused (with `errors` on) resolves to its answer;
   * any other rejection is passed on to the runtime.
   */
  fetch<Rest extends unknown[]>(
    handler: FetchHandler<Rest>,
  ): (request: Request, ...rest: Rest) => Promise<Response>;
  /**
   * Stops the event loop sampling and disposes the shedder and limit the guard built (not those
   * it was given). Requests after it are still guarded; sampling starts again with them.
   */
  dispose(): void;
}

/**
 * Guards a service's inbound requests, in every framework, in this order: a request whose
 * caller's deadline has passed is answered 504 before any work; a client over its rate limit
 * gets 429 with the GCRA's exact `Retry-After`; then the load shedder (event loop pressure,
 * least critical requests first) and the adaptive concurrency limit answer 503 with a
 * `Retry-After` computed from their state. Refusals are RFC 9457 problem bodies. A request let
 * through runs in a request context with its deadline, criticality and a signal that aborts
 * when the client goes away, so the pipelines and the protected fetch it calls take them. No
 * timer or I/O runs before the first request; the event loop sampling stops with `dispose()`.
 *
 * Throws `OptionsError` (from `breakwater`) for an invalid option, naming it.
 *
 * @example
 * ```ts
 * const guard = serviceGuard({
 *   rateLimit: { limiter: new KeyedRateLimiter({ limit: 100, period: 60_000 }) },
 *   concurrency: true,
 *   shedding: true,
 * });
 * app.use(guard.connect);
 * ```
 */
export function serviceGuard(options?: ServiceGuardOptions): ServiceGuard {
  onlyArguments(arguments, 1, 'serviceGuard()');
  const core = new GuardCore(options);
  const fastifyErrorHandler = fastifyErrorAdapter(core);
  return {
    connect: connectAdapter(core),
    errors: connectErrorAdapter(core),
    fastify: fastifyAdapter(core, fastifyErrorHandler),
    fastifyErrorHandler,
    hono: honoAdapter(core),
    node: (handler, onError) => nodeAdapter(core, handler, onError),
    fetch: (handler) => fetchAdapter(core, handler),
    dispose: () => core.dispose(),
  };
}
