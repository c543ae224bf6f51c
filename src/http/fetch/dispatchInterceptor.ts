import type { ExecutionContext } from '../../pipeline/context.js';
import { requestContext } from '../context/requestContext.js';
import { type Begun, FetchEngine } from './engine.js';
import { HttpStatusError, PushbackTooLongError } from './errors.js';
import { type ProtectedFetchOptions, resolveFetchOptions } from './options.js';
import type { OriginStats } from './origin.js';

/** Response headers as undici's handlers get them. */
type DispatchHeaders = Record<string, string | string[] | undefined>;

/** What undici gives a handler to steer its request (undici 7's `DispatchController`). */
export interface DispatchController {
  /** Ends the request with `reason`. */
  abort(reason: Error): void;
  /** Stops the flow of response data until {@link resume}. */
  pause(): void;
  /** Lets response data flow again after {@link pause}. */
  resume(): void;
  readonly aborted?: boolean;
  readonly paused?: boolean;
  readonly reason?: Error | null;
}

/** The handler an interceptor is given (undici 7's `DispatchHandler`), the members used here. */
export interface DispatchHandler {
  /** The request is about to be sent. */
  onRequestStart?(controller: DispatchController, context: unknown): void;
  /** The status line and headers have arrived. */
  onResponseStart?(
    controller: DispatchController,
    statusCode: number,
    headers: DispatchHeaders,
    statusMessage?: string,
  ): void;
  /** A chunk of the response body has arrived. */
  onResponseData?(controller: DispatchController, chunk: Uint8Array): void;
  /** The response ended, with its trailers. */
  onResponseEnd?(controller: DispatchController, trailers: DispatchHeaders): void;
  /** The request failed before its response ended. */
  onResponseError?(controller: DispatchController, error: Error): void;
}

/** The options of a request an interceptor sees (undici's `DispatchOptions`), the members used here. */
export interface DispatchOptions {
  readonly origin?: string | URL;
  readonly path: string;
  readonly method: string;
  // biome-ignore lint/suspicious/noExplicitAny: undici's own types must be accepted without a cast.
  readonly headers?: any;
  // biome-ignore lint/suspicious/noExplicitAny: undici's own types must be accepted without a cast.
  readonly body?: any;
}

/**
 * undici's `dispatch`, as interceptors take and return it. Declared as a method so that its
 * parameters compare both ways: undici's own, stricter types are accepted without a cast.
 */
export type Dispatch = {
  /** Sends a request with `options`, reporting to `handler`; false asks the caller to wait for drain. */
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean;
}['dispatch'];

/** An interceptor for `dispatcher.compose(...)`, with the protected fetch's `stats` and `dispose`. */
export interface ProtectedDispatchInterceptor {
  (dispatch: Dispatch): Dispatch;
  /** The figures of one origin (any URL of it), or undefined when none is held. */
  stats(origin: string | URL): OriginStats | undefined;
  /** The figures of every origin held. */
  stats(): OriginStats[];
  /** Drops every origin's policies; later requests fail with a `UsageError`. */
  dispose(): void;
}

/** One attempt: its controller, and its answer held back until the call settles. */
class Attempt {
  controller: DispatchController | undefined;
  status = 0;
  headers: DispatchHeaders = {};
  statusMessage: string | undefined;
  readonly chunks: Uint8Array[] = [];
  trailers: DispatchHeaders | undefined;
  error: Error | undefined;
  /** The caller's handler, once this attempt's answer is the call's. */
  forward: DispatchHandler | undefined;

  drop(): void {
    const c = this.controller;
    if (c !== undefined && !c.aborted && this.trailers === undefined) {
      c.abort(new DOMException('The attempt was not needed', 'AbortError'));
    }
  }
}

function headerRecord(headers: unknown): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (headers === null || headers === undefined) return out;
  const add = (k: unknown, v: unknown) => {
    if (v !== undefined)
      out[String(k).toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
  };
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i], headers[i + 1]);
  } else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of headers as Iterable<[unknown, unknown]>) add(k, v);
  } else {
    for (const [k, v] of Object.entries(headers as object)) add(k, v);
  }
  return out;
}

function toHeaders(record: DispatchHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(record)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, x);
    else if (v !== undefined) h.append(k, v);
  }
  return h;
}

const isReplayable = (body: unknown) =>
  body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;

/**
 * The protected fetch's engine as an interceptor for undici's dispatchers, for code that calls
 * undici directly (`request`, `stream`, or `fetch` with a dispatcher): the same policies per
 * origin, the same options and defaults ({@link standardPresetDefaults}), the same headers sent.
 * A failed attempt's answer never reaches the handler: each attempt's answer is held (its
 * socket paused) until the call settles, then the call's answer is passed on and the others
 * are aborted, so their connections are not left busy. Bodies of `string` or `Buffer` are sent
 * again on a retry; a stream body is sent once.
 *
 * @example
 * ```ts
 * import { Agent, request } from 'undici';
 * const agent = new Agent().compose(protectedDispatch());
 * const { statusCode } = await request('https://api.example/items', { dispatcher: agent });
 * ```
 */
export function protectedDispatch(
  options?: Omit<ProtectedFetchOptions, 'fetch'>,
): ProtectedDispatchInterceptor {
  const o = resolveFetchOptions(options);
  const engine = new FetchEngine(o);

  const interceptor = (dispatch: Dispatch): Dispatch =>
    function protectedDispatch(opts: DispatchOptions, handler: DispatchHandler): boolean {
      let origin: string | undefined;
      try {
        origin = opts.origin === undefined ? undefined : new URL(String(opts.origin)).origin;
      } catch {}
      if (origin === undefined || origin === 'null') return dispatch(opts, handler);
      run(dispatch, opts, handler, origin);
      return true;
    };

  function run(
    dispatch: Dispatch,
    opts: DispatchOptions,
    handler: DispatchHandler,
    origin: string,
  ) {
    const caller = new AbortController();
    let winner: Attempt | undefined;
    let paused = false;
    const user: DispatchController = {
      abort(reason) {
        caller.abort(reason);
        winner?.controller?.abort(reason);
      },
      pause() {
        paused = true;
        winner?.controller?.pause();
      },
      resume() {
        paused = false;
        winner?.controller?.resume();
      },
      get aborted() {
        return caller.signal.aborted;
      },
      get paused() {
        return paused;
      },
      get reason() {
        return caller.signal.aborted ? (caller.signal.reason as Error) : null;
      },
    };
    const fail = (error: unknown) => handler.onResponseError?.(user, error as Error);
    const headers = headerRecord(opts.headers);
    let begun: Begun;
    try {
      begun = engine.begin({
        origin,
        method: opts.method.toUpperCase(),
        hasIdempotencyKey: headers['idempotency-key'] !== undefined,
        replayable: isReplayable(opts.body),
      });
    } catch (error) {
      fail(error);
      return;
    }
    handler.onRequestStart?.(user, {});
    const context = requestContext();
    const criticality = context?.criticality;
    const attempts: Attempt[] = [];
    let done = false;

    const attempt = (ctx: ExecutionContext) =>
      new Promise<Response>((resolve, reject) => {
        if (!begun.hedged) for (const a of attempts) a.drop();
        const a = new Attempt();
        attempts.push(a);
        const signal = ctx.signal;
        const own = { ...headers };
        if (o.deadlineHeader !== undefined && Number.isFinite(ctx.timeLeft)) {
          own[o.deadlineHeader] = String(Math.floor(ctx.timeLeft));
        }
        if (o.criticalityHeader !== undefined && criticality !== undefined) {
          own[o.criticalityHeader] = criticality;
        }
        // The pipeline's signal (timeouts, a lost hedge) stops the attempt until its headers.
        const onAbort = () => a.controller?.abort(signal.reason as Error);
        signal.addEventListener('abort', onAbort);
        const h: DispatchHandler = {
          onRequestStart(controller) {
            a.controller = controller;
            if (signal.aborted) controller.abort(signal.reason as Error);
          },
          onResponseStart(controller, status, headers, statusMessage) {
            signal.removeEventListener('abort', onAbort);
            a.controller = controller;
            if (done || signal.aborted) {
              controller.abort(signal.reason ?? new DOMException('Settled', 'AbortError'));
              return;
            }
            controller.pause();
            a.status = status;
            a.headers = headers;
            a.statusMessage = statusMessage;
            const response = new Response(null, { status, headers: toHeaders(headers) });
            carriers.set(response, a);
            engine.track(response, begun.state);
            resolve(response);
          },
          onResponseData(_, chunk) {
            if (a.forward !== undefined) a.forward.onResponseData?.(user, chunk);
            else a.chunks.push(chunk);
          },
          onResponseEnd(_, trailers) {
            a.trailers = trailers;
            a.forward?.onResponseEnd?.(user, trailers);
          },
          onResponseError(_, error) {
            signal.removeEventListener('abort', onAbort);
            a.error = error;
            if (a.status === 0) reject(error);
            else a.forward?.onResponseError?.(user, error);
          },
        };
        try {
          dispatch({ ...opts, headers: own }, h);
        } catch (error) {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        }
      });

    const carriers = new WeakMap<Response, Attempt>();
    const { policies } = begun;
    policies.active++;
    begun.pipeline
      .execute(attempt, {
        timeout: begun.timeout,
        signal: caller.signal,
        ...(criticality === undefined ? {} : { criticality }),
      })
      .then(
        (response) => {
          done = true;
          const a = carriers.get(response)!;
          for (const other of attempts) if (other !== a) other.drop();
          const pushback = begun.state.pushback;
          const url = `${origin}${opts.path}`;
          const error =
            pushback !== undefined && pushback.response === response
              ? new PushbackTooLongError(response, url, pushback.wait, pushback.allowed)
              : o.failedResponse === 'reject' && !response.ok
                ? new HttpStatusError(response, url, attempts.length)
                : undefined;
          if (error !== undefined) {
            a.drop();
            fail(error);
            return;
          }
          winner = a;
          handler.onResponseStart?.(user, a.status, a.headers, a.statusMessage);
          for (const chunk of a.chunks.splice(0)) handler.onResponseData?.(user, chunk);
          if (a.trailers !== undefined) handler.onResponseEnd?.(user, a.trailers);
          else if (a.error !== undefined) fail(a.error);
          else {
            a.forward = handler;
            if (!paused) a.controller?.resume();
          }
        },
        (error: unknown) => {
          done = true;
          for (const a of attempts) a.drop();
          fail(error);
        },
      )
      .finally(() => {
        policies.active--;
      });
  }

  const dispose = (): void => engine.dispose();
  return Object.assign(interceptor, {
    stats: engine.stats.bind(engine),
    dispose,
  }) as ProtectedDispatchInterceptor;
}
