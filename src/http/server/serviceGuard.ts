import { onlyArguments } from '../../validation/validate.js';
import {
  type FetchHandler,
  fetchAdapter,
  type HonoMiddleware,
  honoAdapter,
} from './fetchAdapters.js';
import { GuardCore } from './GuardCore.js';
import {
  type ConnectMiddleware,
  connectAdapter,
  type FastifyPlugin,
  fastifyAdapter,
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
   * A Fastify 5 plugin that applies to the instance it is registered on, not a child context:
   * `await fastify.register(guard.fastify)`.
   */
  readonly fastify: FastifyPlugin;
  /** Hono middleware: `app.use(guard.hono)`. */
  readonly hono: HonoMiddleware;
  /**
   * `handler` guarded, for `http.createServer(guard.node(handler))`. A handler that throws or
   * rejects gets a 500 when nothing was sent yet (the connection is ended otherwise), and its
   * error goes to `onError`.
   */
  node<Req extends NodeRequestLike, Res extends NodeResponseLike>(
    handler: NodeHandler<Req, Res>,
    onError?: (error: unknown) => void,
  ): NodeHandler<Req, Res>;
  /**
   * A fetch-style `handler` guarded (`(Request, ...) => Response`), for Bun, Deno, workerd and
   * Hono's `app.fetch`. The client's address comes from the handler's second argument where the
   * runtime gives one (Deno's handler info, Bun's server, Hono's Node server env).
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
 * Throws {@link OptionsError} for an invalid option, naming it.
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
  return {
    connect: connectAdapter(core),
    fastify: fastifyAdapter(core),
    hono: honoAdapter(core),
    node: (handler, onError) => nodeAdapter(core, handler, onError),
    fetch: (handler) => fetchAdapter(core, handler),
    dispose: () => core.dispose(),
  };
}
