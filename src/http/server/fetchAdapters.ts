import type { GuardCore } from './GuardCore.js';
import type { InboundRequest } from './options.js';
import type { HeaderList, Refusal } from './refusals.js';

/** A fetch-style request as the guard's options see it. */
class FetchInbound implements InboundRequest {
  constructor(
    readonly raw: Request,
    readonly ip: string | undefined,
  ) {}
  get method(): string {
    return this.raw.method;
  }
  get url(): string {
    return this.raw.url;
  }
  header(name: string): string | undefined {
    return this.raw.headers.get(name) ?? undefined;
  }
}

function refusalResponse(refusal: Refusal): Response {
  return new Response(refusal.body, {
    status: refusal.status,
    headers: refusal.headers as [string, string][],
  });
}

/** `response` with `headers` added (a copy when its headers are immutable). */
function withHeaders(response: Response, headers: HeaderList): Response {
  if (headers.length === 0) return response;
  try {
    for (const [name, value] of headers) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of headers) copy.headers.set(name, value);
    return copy;
  }
}

/**
 * The client's address where the runtime gives it beside the request: Deno's `serve` handler
 * info (`info.remoteAddr.hostname`), Bun's server (`server.requestIP(request).address`), or
 * Hono's Node server (`env.incoming.socket.remoteAddress`).
 */
function addressOf(request: Request, extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return undefined;
  const e = extra as {
    remoteAddr?: { hostname?: string };
    requestIP?: (r: Request) => { address?: string } | null;
    incoming?: { socket?: { remoteAddress?: string } };
  };
  return (
    e.remoteAddr?.hostname ??
    (typeof e.requestIP === 'function' ? e.requestIP(request)?.address : undefined) ??
    e.incoming?.socket?.remoteAddress
  );
}

/** A fetch-style handler: Bun, Deno, workerd, Hono's `app.fetch`. */
export type FetchHandler<Rest extends unknown[] = unknown[]> = (
  request: Request,
  ...rest: Rest
) => Response | PromiseLike<Response>;

/** @internal */
export function fetchAdapter<Rest extends unknown[]>(
  core: GuardCore,
  handler: FetchHandler<Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  return (request, ...rest) =>
    new Promise<Response>((resolve, reject) => {
      core.handle(
        new FetchInbound(request, addressOf(request, rest[0])),
        request,
        (headers) => {
          const answered = Promise.resolve()
            .then(() => handler(request, ...rest))
            .then(
              (response) => withHeaders(response, headers),
              (error) => {
                const answer = core.mapsErrors ? core.answerFailure(error) : undefined;
                if (answer === undefined) throw error;
                return withHeaders(refusalResponse(answer), headers);
              },
            );
          answered.then(resolve, reject);
          // Without a view of the connection, the permit is held until the handler's
          // response is returned (its body may still be streaming).
          return answered.then(
            (response) => response.status,
            () => 500,
          );
        },
        (refusal) => resolve(refusalResponse(refusal)),
      );
    });
}

/** The parts of Hono's context the guard uses. */
export interface HonoContextLike {
  readonly req: { readonly raw: Request };
  readonly env?: unknown;
  res: Response;
  /** The error a handler threw, which Hono's `onError` answered. */
  readonly error?: unknown;
}

/** A Hono middleware: `app.use(guard.hono)`. */
export type HonoMiddleware = (
  c: HonoContextLike,
  next: () => Promise<void>,
) => Promise<Response | undefined>;

/** @internal */
export function honoAdapter(core: GuardCore): HonoMiddleware {
  return (c, next) =>
    new Promise<Response | undefined>((resolve, reject) => {
      const request = c.req.raw;
      const outgoing = (c.env as { outgoing?: NodeOutgoing } | undefined)?.outgoing;
      core.handle(
        new FetchInbound(request, addressOf(request, c.env)),
        request,
        (headers) => {
          const done = next().then(() => {
            // Hono's compose caught the handler's error, left it in `c.error` and answered 500.
            const error = c.error;
            const answer =
              core.mapsErrors && error !== undefined ? core.answerFailure(error) : undefined;
            c.res = withHeaders(answer === undefined ? c.res : refusalResponse(answer), headers);
          });
          done.then(() => resolve(undefined), reject);
          // On Hono's Node server the permit is held until the response ends.
          if (outgoing !== undefined) return endOf(outgoing);
          return done.then(
            () => c.res.status,
            () => 500,
          );
        },
        (refusal) => resolve(refusalResponse(refusal)),
      );
    });
}

interface NodeOutgoing {
  readonly statusCode: number;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

function endOf(res: NodeOutgoing): Promise<number> {
  return new Promise((resolve) => {
    res.once('finish', () => resolve(res.statusCode));
    res.once('close', () => resolve(res.statusCode));
  });
}
