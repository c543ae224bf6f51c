import type { ServerResponse } from 'node:http';

/** Headers every answer carries: nothing here may be cached or sniffed as another type. */
const COMMON = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

const encoder = new TextEncoder();

/** Numbers with a fraction keep 4 decimals: 0.1 µs of a duration in ms, 0.01 % of a rate. */
const DECIMALS = 1e4;
/** Past this, a fraction is below the precision of a double anyway. */
const ROUNDED_BELOW = 1e11;

function rounded(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) && Math.abs(value) < ROUNDED_BELOW
    ? Math.round(value * DECIMALS) / DECIMALS
    : value;
}

/**
 * @internal JSON that is safe inside an HTML `<script>` element and on one SSE `data:` line:
 * `<`, `>` and `&` are written as `\u` escapes (no `</script>` or `<!--` can appear), and so
 * are U+2028 and U+2029. `JSON.stringify` already escapes CR and LF inside strings.
 *
 * Every number with a fraction is rounded to 4 decimals, so sums and clock readings of
 * floating point (`0.30000000000000004`, `133.83380399999987`) read as what they measure.
 */
export function safeJson(value: unknown): string {
  return JSON.stringify(value, rounded).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** @internal Sends a whole answer; for HEAD, the same headers without the body. */
export function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  head: boolean,
  headers: Readonly<Record<string, string>> = {},
): void {
  // Encoded once, for its length and to send: a metrics page may be megabytes.
  const bytes = encoder.encode(body);
  res.writeHead(status, {
    ...COMMON,
    ...headers,
    'Content-Type': contentType,
    'Content-Length': String(bytes.byteLength),
  });
  if (head) res.end();
  else res.end(bytes);
}

/** @internal A plain-text answer (errors, 404, 405). */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  head: boolean,
  headers?: Readonly<Record<string, string>>,
): void {
  send(res, status, 'text/plain; charset=utf-8', `${text}\n`, head, headers);
}

/** @internal Headers of an SSE stream. */
export const STREAM_HEADERS = {
  ...COMMON,
  'Content-Type': 'text/event-stream; charset=utf-8',
  // Proxies such as nginx buffer answers unless told not to; a stream must flow at once.
  'X-Accel-Buffering': 'no',
} as const;

/** @internal A random nonce for the dashboard's Content-Security-Policy (128 bits, base64). */
export function nonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
