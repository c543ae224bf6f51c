import type { Criticality } from '../../protocol/criticality.js';
import type { DurationString } from '../../protocol/kind.js';

/** What `fetch` takes as its first argument (`RequestInfo | URL` in the DOM's types). */
export type FetchInput = string | URL | Request;

/** A request body `fetch` takes (`BodyInit` in the DOM's types). */
export type FetchBody = NonNullable<RequestInit['body']>;

/** What one call of the protected fetch may add to `fetch`'s `RequestInit`. */
export interface ProtectedRequestInit {
  /**
   * Retry (and hedge) this request whatever its method: say so for a POST that is safe to
   * send twice. `false` treats even a GET as unsafe to repeat. @default by method and `Idempotency-Key`
   */
  readonly idempotent?: boolean;
  /** `false`: one attempt only, whatever the method. @default true */
  readonly retry?: boolean;
  /** This call's deadline, ms, when shorter than the options' `timeout`. @default the options' */
  readonly timeout?: number | DurationString;
  /** How much the call matters: the limit's partitions read it, and it is sent downstream. */
  readonly criticality?: Criticality;
  /**
   * The body, or a function making it anew for each attempt: the way to retry a stream body.
   * A string, `ArrayBuffer`, typed array, `Blob`, `FormData` or `URLSearchParams` is replayed
   * as is; a `ReadableStream` given as is is sent once and never retried.
   */
  readonly body?: FetchBody | null | (() => FetchBody);
}

/** The second argument of a protected fetch: `fetch`'s own, with {@link ProtectedRequestInit}. */
export type ProtectedInit = Omit<RequestInit, 'body'> & ProtectedRequestInit;

/** @internal A request taken apart once, from which every attempt is made. */
export interface Outgoing {
  readonly url: string;
  /** `scheme://host:port`; undefined for a URL that does not parse (fetch reports it). */
  readonly origin: string | undefined;
  readonly method: string;
  /** The caller's headers; undefined when it gave none (no `Headers` made for nothing). */
  readonly headers: Headers | undefined;
  /** The rest of the request's settings (credentials, redirect, ...). */
  readonly init: RequestInit;
  /** True when every attempt can send the same body (or a new one from a factory). */
  readonly replayable: boolean;
  /** The body of one attempt. */
  body(): FetchBody | null | undefined;
}

const REQUEST_FIELDS = [
  'cache',
  'credentials',
  'integrity',
  'keepalive',
  'mode',
  'redirect',
  'referrer',
  'referrerPolicy',
] as const;
const OWN_FIELDS = new Set([
  'idempotent',
  'retry',
  'timeout',
  'criticality',
  'body',
  'headers',
  'signal',
  'method',
]);

function isRequest(input: unknown): input is Request {
  return (
    typeof input === 'object' &&
    input !== null &&
    !(input instanceof URL) &&
    typeof (input as Request).url === 'string' &&
    typeof (input as Request).method === 'string'
  );
}

/** True for a body `fetch` reads afresh each time it is sent. */
function isReplayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    (typeof FormData !== 'undefined' && body instanceof FormData) ||
    body instanceof URLSearchParams
  );
}

/** The last absolute URL seen and its origin: most clients call the same few URLs in a row. */
let lastUrl = '';
let lastOrigin: string | undefined;

function originOf(url: string): string | undefined {
  // An absolute http(s) URL's origin does not depend on the page's base, so it can be kept.
  if (url === lastUrl) return lastOrigin;
  try {
    const base = (globalThis as { location?: { href?: string } }).location?.href;
    const parsed = new URL(url, base).origin;
    const origin = parsed === 'null' ? undefined : parsed;
    if (url.startsWith('http://') || url.startsWith('https://')) {
      lastUrl = url;
      lastOrigin = origin;
    }
    return origin;
  } catch {
    return undefined;
  }
}

/** @internal Takes `fetch`'s arguments apart into what every attempt is made from. */
export function outgoing(input: FetchInput, init: ProtectedInit | undefined): Outgoing {
  const request = isRequest(input) ? input : undefined;
  const url = request === undefined ? String(input) : request.url;
  let headers = request === undefined ? undefined : new Headers(request.headers);
  if (init?.headers !== undefined) {
    headers ??= new Headers();
    for (const [name, value] of new Headers(init.headers)) headers.set(name, value);
  }
  const rest: Record<string, unknown> = {};
  if (request !== undefined) for (const f of REQUEST_FIELDS) rest[f] = request[f];
  if (init !== undefined) {
    for (const [k, v] of Object.entries(init)) if (!OWN_FIELDS.has(k)) rest[k] = v;
  }
  const given = init?.body;
  const body = given !== undefined ? given : (request?.body ?? null);
  const factory = typeof body === 'function' ? (body as () => FetchBody) : undefined;
  const replayable = factory !== undefined || isReplayable(body);
  const stream = factory === undefined && !replayable;
  if (stream) rest.duplex = 'half';
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
  return {
    url,
    origin: originOf(url),
    method,
    headers,
    init: rest as RequestInit,
    replayable,
    body:
      factory === undefined
        ? () => body as FetchBody | null
        : () => {
            const made = factory();
            // A stream made by the factory still needs the half-duplex flag Node's fetch asks for.
            if (!isReplayable(made)) (rest as { duplex?: string }).duplex = 'half';
            return made;
          },
  };
}

/** @internal Lets go of a response nobody will read, so its connection goes back to the pool. */
export function release(response: Response): void {
  if (response.body !== null && !response.bodyUsed) response.body.cancel().catch(() => {});
}
