import type { IncomingMessage, ServerResponse } from 'node:http';
import { OptionsError } from '../errors/OptionsError.js';
import { collectMetrics } from '../exporters/collect.js';
import { prometheusText } from '../exporters/exposition.js';
import { defaultRegistry, type Registry } from '../registry/Registry.js';
import { hasMethods } from '../validation/validate.js';
import { dashboardPage, dashboardPolicy } from './dashboard/page.js';
import { healthReport, NO_POLICIES_HINT } from './health.js';
import { LiveFeed } from './LiveFeed.js';
import {
  type ObservabilityHandlerOptions,
  type ResolvedHandlerOptions,
  resolveHandlerOptions,
} from './options.js';
import { nonce, STREAM_HEADERS, safeJson, send, sendText } from './respond.js';

/** What a framework passes on: call it to let the next handler answer, with an error or not. */
export type NextFunction = (error?: unknown) => void;

/**
 * A request handler for `node:http`, Express (as middleware) and Fastify (on a raw route),
 * with `close()` to end the live streams. See {@link createObservabilityHandler}.
 */
export interface ObservabilityHandler {
  (req: IncomingMessage, res: ServerResponse, next?: NextFunction): void;
  /** Ends every `/events` stream, stops their timer and refuses new ones (503). Idempotent. */
  close(): void;
  /** Dashboards (`/events` streams) connected now. */
  readonly clients: number;
}

/** Content type of the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const ALLOW = 'GET, HEAD';

type Route = (res: ServerResponse, head: boolean) => void;

/**
 * Serves a registry's health, metrics and a live dashboard over HTTP, read-only. Without a
 * registry (`createObservabilityHandler()` or `createObservabilityHandler(options)`), serves
 * `defaultRegistry`, which lists the named policies built in code
 * (`circuitBreaker({ name: 'payments' })`) while they are referenced:
 *
 * - `GET /health`: JSON ({@link HealthReport}) of every instance; 200, or 503 while a breaker
 *   named in `critical` is open or forced open. Numbers with a fraction are rounded to 4
 *   decimals (0.1 µs of a duration in ms), here and on `/events`.
 * - `GET /metrics`: the Prometheus text exposition of `collectMetrics(registry)`.
 * - `GET /dashboard`: one self-contained page (no external requests, strict
 *   Content-Security-Policy) showing every instance live: breaker states and time in state,
 *   call and rejection rates, p50 and p99 of the last minute, a captioned sparkline per
 *   instance and the recent transitions; and per instance, charts of up to the last 5 minutes
 *   that the page keeps (a state band with its transitions marked; calls, refusals and
 *   failures per second; p50 and p99; the levels of its kind's dashboard row, such as in
 *   flight against the limit or a budget's balance).
 * - `GET /events`: the page's Server-Sent Events stream.
 *
 * A route's path may end with one slash (`/ops/dashboard/`). `HEAD` is answered like `GET`
 * without a body; other methods get 405. A path the handler does not serve goes to `next()`
 * when there is one, else gets 404. Names and keys are untrusted: the page renders them as
 * text only, and the JSON it is sent cannot close a `<script>` element.
 *
 * With nothing to list, each route says how to make policies show: `/health` in a `note`,
 * `/metrics` in a comment line, the dashboard in a line of text.
 *
 * The handler changes nothing and checks no credentials: mount it behind the application's
 * own authentication. Call `close()` on shutdown to end the open dashboard streams (they
 * would otherwise hold `server.close()` open; their timer never keeps the process alive).
 *
 * @example node:http, behind the application's own check
 * ```ts
 * const ops = createObservabilityHandler(registry, { basePath: '/ops', critical: ['payments'] });
 * http.createServer((req, res) => {
 *   if (req.url?.startsWith('/ops/') && !isOperator(req)) {
 *     res.writeHead(401).end();
 *     return;
 *   }
 *   ops(req, res, () => app(req, res)); // paths it does not serve go to the application
 * });
 * ```
 * @example Express: the mount path is stripped from req.url, so no basePath
 * ```ts
 * app.use('/ops', requireOperator, createObservabilityHandler(registry));
 * ```
 * @example Fastify: a raw route; the handler sees the full URL, so give it basePath
 * ```ts
 * const ops = createObservabilityHandler(registry, { basePath: '/ops' });
 * fastify.all('/ops/*', { onRequest: requireOperator }, (req, reply) => {
 *   reply.hijack();
 *   ops(req.raw, reply.raw);
 * });
 * // preClose: the open streams would otherwise keep the server from closing.
 * fastify.addHook('preClose', async () => ops.close());
 * ```
 */
export function createObservabilityHandler(
  options?: ObservabilityHandlerOptions,
): ObservabilityHandler;
export function createObservabilityHandler(
  registry: Registry | undefined,
  options?: ObservabilityHandlerOptions,
): ObservabilityHandler;
export function createObservabilityHandler(
  registryOrOptions?: Registry | ObservabilityHandlerOptions,
  maybeOptions?: ObservabilityHandlerOptions,
): ObservabilityHandler {
  const [registry, options] = registryAndOptions(registryOrOptions, maybeOptions);
  const o = resolveHandlerOptions(options);
  const feed = new LiveFeed(registry, o);
  const routes = makeRoutes(registry, o, feed);

  const handler = (req: IncomingMessage, res: ServerResponse, next?: NextFunction): void => {
    const head = req.method === 'HEAD';
    const path = pathOf(req.url ?? '/', o.basePath);
    const route = path === undefined ? undefined : routes.get(path);
    if (route === undefined) {
      if (next !== undefined) next();
      else sendText(res, 404, 'Not found', head);
      return;
    }
    if (req.method !== 'GET' && !head) {
      sendText(res, 405, 'Method not allowed', false, { Allow: ALLOW });
      return;
    }
    try {
      route(res, head);
    } catch (error) {
      if (next !== undefined) next(error);
      else if (!res.headersSent) sendText(res, 500, 'Internal error', head);
      else res.destroy();
    }
  };
  return Object.defineProperties(handler, {
    close: { value: () => feed.close() },
    clients: { get: () => feed.size },
  }) as ObservabilityHandler;
}

function makeRoutes(
  registry: Registry,
  o: ResolvedHandlerOptions,
  feed: LiveFeed,
): ReadonlyMap<string, Route> {
  return new Map<string, Route>([
    [
      '/health',
      (res, head) => {
        const { status, body } = healthReport(registry, o.critical, o.maxKeysPerName);
        send(res, status, 'application/json; charset=utf-8', safeJson(body), head);
      },
    ],
    [
      '/metrics',
      (res, head) => {
        const text = prometheusText(collectMetrics(registry, o.collect));
        send(res, 200, PROMETHEUS_CONTENT_TYPE, text === '' ? NOTHING_TO_REPORT : text, head);
      },
    ],
    [
      '/dashboard',
      (res, head) => {
        const n = nonce();
        send(res, 200, 'text/html; charset=utf-8', dashboardPage(o.title, n), head, {
          'Content-Security-Policy': dashboardPolicy(n),
          'Referrer-Policy': 'no-referrer',
          'X-Frame-Options': 'DENY',
        });
      },
    ],
    [
      '/events',
      (res, head) => {
        if (head) sendStreamHead(res);
        else feed.accept(res);
      },
    ],
  ]);
}

/**
 * The path below `basePath` (`'/health'`), or undefined when the URL is outside it. One
 * trailing slash is dropped: `/ops/health/` is `/ops/health`, as many proxies and users write it.
 */
function pathOf(url: string, basePath: string): string | undefined {
  const end = url.search(/[?#]/);
  let path = end < 0 ? url : url.slice(0, end);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (basePath === '') return path;
  if (path === basePath) return '/';
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined;
}

function sendStreamHead(res: ServerResponse): void {
  res.writeHead(200, STREAM_HEADERS);
  res.end();
}

/**
 * The body of `/metrics` when there is no series: a comment, which scrapers skip, so that a
 * person reading it learns why it is empty.
 */
const NOTHING_TO_REPORT = `# ${NO_POLICIES_HINT}\n`;

/** The registry (given, or `defaultRegistry`) and the options, from the arguments. */
function registryAndOptions(
  first: unknown,
  second: ObservabilityHandlerOptions | undefined,
): [Registry, ObservabilityHandlerOptions | undefined] {
  if (first === undefined) return [defaultRegistry, second];
  if (isRegistry(first)) return [first, second];
  if (
    typeof first === 'object' &&
    first !== null &&
    !Array.isArray(first) &&
    second === undefined
  ) {
    return [defaultRegistry, first as ObservabilityHandlerOptions];
  }
  throw new OptionsError('registry', first, 'a Registry, or the options alone');
}

function isRegistry(value: unknown): value is Registry {
  return hasMethods(value, ['instancesForMetrics', 'onStateChange', 'recentTransitions']);
}
