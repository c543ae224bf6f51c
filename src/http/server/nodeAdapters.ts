import type { Client, GuardCore } from './GuardCore.js';
import type { InboundRequest, ServiceGuardOptions } from './options.js';
import type { HeaderList, Refusal } from './refusals.js';

/** The parts of Node's `IncomingMessage` (and Express' request) the guard reads. */
export interface NodeRequestLike {
  readonly method?: string;
  readonly url?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly socket?: { readonly remoteAddress?: string } | null;
  /** Express' `req.ip` (which honours `trust proxy`), when there. */
  readonly ip?: string;
  /** Express' application, whose `trust proxy` setting says whether `req.ip` reads proxy headers. */
  readonly app?: { readonly settings?: Readonly<Record<string, unknown>> };
}

/** The parts of Node's `ServerResponse` the guard uses. */
export interface NodeResponseLike {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  /** Sets a response header. */
  setHeader(name: string, value: string): unknown;
  /** Ends the response, with `body` if given. */
  end(body?: string): unknown;
  /** Calls `listener` once the response finishes or its connection closes. */
  once(event: 'finish' | 'close', listener: () => void): unknown;
  /** Destroys the response's stream (the connection), with `error` if given. */
  destroy(error?: Error): unknown;
}

/** A Node request as the guard's options see it. */
class NodeInbound implements InboundRequest {
  constructor(
    readonly raw: NodeRequestLike,
    /** Where the framework keeps the client's address (Express' `req`, Fastify's request). */
    private readonly ipSource: Pick<NodeRequestLike, 'ip' | 'app'> | undefined,
  ) {}
  get method(): string {
    return this.raw.method ?? 'GET';
  }
  get url(): string {
    return this.raw.url ?? '/';
  }
  /**
   * Read only when asked: Express computes `req.ip` from the proxy headers on every read (about
   * 2 µs), and with `trust proxy` off, its default, that is always the socket's address.
   */
  get ip(): string | undefined {
    const source = this.ipSource;
    const settings = source?.app?.settings;
    if (settings !== undefined && !settings['trust proxy']) return this.raw.socket?.remoteAddress;
    return source?.ip ?? this.raw.socket?.remoteAddress;
  }
  header(name: string): string | undefined {
    const headers = this.raw.headers;
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/**
 * A response's end and its client's going away: one `close` listener (Node emits `close` after
 * `finish` too), with the signal and the promise of the end made only when asked for, since
 * most requests need neither (an AbortController costs microseconds on Node 20).
 */
class ResponseWatch implements Client {
  private closed = false;
  private left = false;
  private controller: AbortController | undefined = undefined;
  private end: Promise<number> | undefined = undefined;
  private resolveEnd: ((status: number) => void) | undefined = undefined;

  constructor(private readonly res: NodeResponseLike) {
    res.once('close', () => this.onClose());
  }

  get gone(): boolean {
    return this.left;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.left && !this.controller.signal.aborted) this.controller.abort(wentAway());
    return this.controller.signal;
  }

  ended(): PromiseLike<number> {
    if (this.closed) return Promise.resolve(this.res.statusCode);
    this.end ??= new Promise<number>((resolve) => {
      this.resolveEnd = resolve;
    });
    return this.end;
  }

  private onClose(): void {
    this.closed = true;
    if (!this.res.writableFinished) {
      this.left = true;
      this.controller?.abort(wentAway());
    }
    this.resolveEnd?.(this.res.statusCode);
  }
}

const wentAway = (): Error => new Error('the client went away');

function setHeaders(res: NodeResponseLike, headers: HeaderList): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

function send(res: NodeResponseLike, refusal: Refusal): void {
  if (res.headersSent || res.writableEnded) return;
  res.statusCode = refusal.status;
  setHeaders(res, refusal.headers);
  res.end(refusal.body);
}

/**
 * Answers a handler's error when nothing was sent yet: the guard's answer to a failure the
 * library caused (with `errors` on), else 500. A response already started cannot be changed:
 * its connection is destroyed, as Node's frameworks do, so the client sees it cut short.
 */
function failed(
  core: GuardCore,
  res: NodeResponseLike,
  error: unknown,
  onError?: (error: unknown) => void,
): void {
  onError?.(error);
  if (res.headersSent) res.destroy(error instanceof Error ? error : undefined);
  else if (!res.writableEnded) {
    const answer = core.mapsErrors ? core.answerFailure(error) : undefined;
    if (answer !== undefined) send(res, answer);
    else {
      res.statusCode = 500;
      res.end();
    }
  }
}

/**
 * Express' error middleware (`app.use(guard.errors)` after the routes): answers a failure the
 * library caused (see {@link ServiceGuardOptions.errors}) and passes any other error, and any
 * error once the response has started, to `next` (Express then ends the connection, as it does
 * for its own).
 */
export type ConnectErrorMiddleware = (
  error: unknown,
  req: NodeRequestLike,
  res: NodeResponseLike,
  next: (error?: unknown) => void,
) => void;

/** @internal */
export function connectErrorAdapter(core: GuardCore): ConnectErrorMiddleware {
  // Four parameters: Express tells error middleware by its arity.
  return (error, _req, res, next) => {
    const answer = res.headersSent ? undefined : core.answerFailure(error);
    if (answer === undefined) next(error);
    else send(res, answer);
  };
}

/** A request handler of `node:http`. */
export type NodeHandler<Req = NodeRequestLike, Res = NodeResponseLike> = (
  req: Req,
  res: Res,
) => unknown;

/** @internal */
export function nodeAdapter<Req extends NodeRequestLike, Res extends NodeResponseLike>(
  core: GuardCore,
  handler: NodeHandler<Req, Res>,
  onError?: (error: unknown) => void,
): NodeHandler<Req, Res> {
  return (req, res) => {
    core.handle(
      new NodeInbound(req, undefined),
      new ResponseWatch(res),
      (headers) => {
        setHeaders(res, headers);
        try {
          const result = handler(req, res) as PromiseLike<unknown> | undefined;
          if (typeof result?.then === 'function') {
            result.then(undefined, (error) => failed(core, res, error, onError));
          }
        } catch (error) {
          failed(core, res, error, onError);
        }
        return undefined;
      },
      (refusal) => send(res, refusal),
    );
  };
}

/** A connect-style middleware (Express 5, connect, polka…). */
export type ConnectMiddleware = (
  req: NodeRequestLike,
  res: NodeResponseLike,
  next: (error?: unknown) => void,
) => void;

/** @internal */
export function connectAdapter(core: GuardCore): ConnectMiddleware {
  return (req, res, next) => {
    core.handle(
      new NodeInbound(req, req),
      new ResponseWatch(res),
      (headers) => {
        setHeaders(res, headers);
        next();
        return undefined;
      },
      (refusal) => send(res, refusal),
    );
  };
}

/** The parts of a Fastify 5 instance (and its request) the guard uses. */
export interface FastifyLike {
  /** Adds the guard's `onRequest` hook. */
  addHook(
    name: 'onRequest',
    hook: (
      request: { readonly raw: NodeRequestLike; readonly ip?: string },
      reply: FastifyReplyLike,
      done: (error?: Error) => void,
    ) => void,
  ): unknown;
  /** The error handler of the instance's scope: Fastify's `defaultErrorHandler` until one is set. */
  readonly errorHandler?: { readonly name: string };
  /** Sets the error handler of the instance's scope. */
  setErrorHandler?(handler: FastifyErrorHandler): unknown;
}

/**
 * An error handler for `fastify.setErrorHandler`: answers a failure the library caused (see
 * {@link ServiceGuardOptions.errors}) and throws any other error, and any error once the
 * response has started, on to the handler of the parent scope (Fastify's own by default, which
 * destroys a started response's connection).
 */
export type FastifyErrorHandler = (
  error: unknown,
  request: unknown,
  reply: FastifyReplyLike,
) => FastifyReplyLike;

/** The parts of a Fastify 5 reply the guard uses. */
export interface FastifyReplyLike {
  readonly raw: NodeResponseLike;
  /** Sets a response header. */
  header(name: string, value: string): unknown;
  /** Sets the status code. */
  code(status: number): unknown;
  /** Sends the body and ends the response. */
  send(body: string): unknown;
}

/** A Fastify plugin (`fastify.register(guard.fastify)`), not encapsulated. */
export type FastifyPlugin = ((
  instance: FastifyLike,
  options: unknown,
  done: (error?: Error) => void,
) => void) & { readonly [key: symbol]: unknown };

/** @internal */
export function fastifyErrorAdapter(core: GuardCore): FastifyErrorHandler {
  return (error, _request, reply) => {
    const answer = reply.raw.headersSent ? undefined : core.answerFailure(error);
    if (answer === undefined) throw error;
    reply.code(answer.status);
    for (const [name, value] of answer.headers) reply.header(name, value);
    reply.send(answer.body);
    return reply;
  };
}

/** @internal */
export function fastifyAdapter(core: GuardCore, onError: FastifyErrorHandler): FastifyPlugin {
  const plugin = (instance: FastifyLike, _options: unknown, done: (error?: Error) => void) => {
    // Only in place of Fastify's own: an error handler the user set is never replaced.
    if (core.mapsErrors && instance.errorHandler?.name === 'defaultErrorHandler') {
      instance.setErrorHandler?.(onError);
    }
    instance.addHook('onRequest', (request, reply, hookDone) => {
      core.handle(
        new NodeInbound(request.raw, request),
        new ResponseWatch(reply.raw),
        (headers) => {
          for (const [name, value] of headers) reply.header(name, value);
          hookDone();
          return undefined;
        },
        (refusal) => {
          reply.code(refusal.status);
          for (const [name, value] of refusal.headers) reply.header(name, value);
          reply.send(refusal.body);
        },
      );
    });
    done();
  };
  // What fastify-plugin sets: the hook applies to the whole instance, not a child context.
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'breakwater-service-guard',
  });
}
