/**
 * A flaky dependency on loopback for the examples' tests: it answers JSON, fails a given share
 * of requests with 503 and `Retry-After`, or hangs, and counts what reaches it.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the downstream answers the next requests. */
export type DownstreamMode =
  /** 200 with JSON, or 503 with `Retry-After` for a `failShare` of the requests. */
  | 'flaky'
  /** Never answers: holds the request until the client goes away or the server closes. */
  | 'hang';

/** One request that reached the downstream. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The status it got; undefined while it is held (hang) or when the client left first. */
  status: number | undefined;
  /** True once the client closed the connection before an answer. */
  abandoned: boolean;
}

export interface FlakyDownstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request since the last `reset()`, in order of arrival. */
  readonly received: readonly ReceivedRequest[];
  mode: DownstreamMode;
  /**
   * The share of requests in [0, 1] answered 503, spread evenly and starting with the first
   * after a `reset()`: 0.5 fails the 1st, 3rd, 5th...
   */
  failShare: number;
  /** Forgets the requests received and starts the failure pattern again. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts a downstream named `name` (echoed in its JSON answers) on a free loopback port.
 * `retryAfter` is the `Retry-After` of its 503 answers (seconds; "0" asks for no wait).
 */
export async function startFlakyDownstream(
  name: string,
  { failShare = 0, retryAfter = '0' }: { failShare?: number; retryAfter?: string } = {},
): Promise<FlakyDownstream> {
  let received: ReceivedRequest[] = [];
  let answered = 0;
  const server = createServer((req, res) => {
    const request: ReceivedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      status: undefined,
      abandoned: false,
    };
    received.push(request);
    res.on('close', () => {
      if (!res.writableFinished) request.abandoned = true;
    });
    req.resume();
    if (downstream.mode === 'hang') return;
    const n = ++answered;
    // Fails the n-th request when the n-th multiple of the share crosses a whole number.
    const fails = Math.ceil(n * downstream.failShare) > Math.ceil((n - 1) * downstream.failShare);
    request.status = fails ? 503 : 200;
    if (fails) {
      res.writeHead(503, { 'retry-after': retryAfter, 'content-type': 'text/plain' });
      res.end('overloaded');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ from: name, path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const downstream: FlakyDownstream = {
    url: `http://127.0.0.1:${port}`,
    get received() {
      return received;
    },
    mode: 'flaky',
    failShare,
    reset() {
      received = [];
      answered = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return downstream;
}
