import type { ServerResponse } from 'node:http';
import type { Disposer } from '../events/Listeners.js';
import { reportCallbackError } from '../events/Listeners.js';
import type { RegistryTransition } from '../policies/kinds.js';
import type { AnyPolicyKind, DashboardRow } from '../protocol/kind.js';
import { limitedSnapshot } from '../registry/listing.js';
import type { Registry } from '../registry/Registry.js';
import { STREAM_HEADERS, safeJson, sendText } from './respond.js';

/**
 * A client whose unsent output grows past this is not reading (a stalled tab, a dead peer
 * the kernel has not noticed yet): it is dropped rather than buffered without limit.
 */
const MAX_BUFFERED = 1 << 20;

/** Seconds a dashboard refused for lack of room is asked to wait before it tries again. */
const RETRY_AFTER = 10;

interface Unrefable {
  unref?: () => void;
}

/** Settings of a {@link LiveFeed}. */
export interface LiveFeedSettings {
  readonly interval: number;
  readonly maxClients: number;
  readonly maxKeysPerName: number;
}

/**
 * @internal The Server-Sent Events stream behind `/events`, shared by every connected
 * dashboard: one `snapshot` event at once (with the recent transitions) and then one every
 * `interval` ms, and a `transition` event for each state change (a breaker's) as it happens.
 *
 * One timer and one registry listener serve all clients. Both exist only while a client is
 * connected: the first one starts them, the last one to leave stops them. The timer is
 * unref'd, so an open dashboard never keeps the process alive, and `close()` ends every stream.
 */
export class LiveFeed {
  private readonly clients = new Set<ServerResponse>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: Disposer | undefined;
  private pending: RegistryTransition[] = [];
  private closed = false;

  constructor(
    private readonly registry: Registry,
    private readonly settings: LiveFeedSettings,
  ) {}

  /** Streams connected now. */
  get size(): number {
    return this.clients.size;
  }

  /** Answers a GET of the stream: adds the client, or refuses it with 503. */
  accept(res: ServerResponse): void {
    // The client may have left before the handler ran (an authentication check or a framework
    // hook in front of it took a while): its 'close' event has fired already and will not
    // again, so it must not be counted, or it would hold a place and the timer for good.
    if (res.destroyed || res.socket?.destroyed === true) return;
    if (this.closed) {
      sendText(res, 503, 'The event stream is closed', false);
      return;
    }
    if (this.clients.size >= this.settings.maxClients) {
      sendText(res, 503, 'Too many dashboards are connected', false, {
        'Retry-After': String(RETRY_AFTER),
      });
      return;
    }
    // Tells EventSource how long to wait before reconnecting after the stream ends.
    const first = `retry: ${Math.max(1000, this.settings.interval)}\n\n${this.snapshotFrame(true)}`;
    res.writeHead(200, STREAM_HEADERS);
    this.clients.add(res);
    if (this.clients.size === 1) this.start();
    // 'close' on the response fires when the client goes away (or the stream ends); the
    // request's own 'close' fires once its (empty) body is read, which says nothing of that.
    res.once('close', () => this.remove(res));
    this.write(res, first);
  }

  /** Ends every stream, stops the timer and refuses new clients. */
  close(): void {
    this.closed = true;
    const clients = [...this.clients];
    this.clients.clear();
    this.stop();
    for (const res of clients) res.end();
  }

  private start(): void {
    this.timer = setInterval(() => this.tick(), this.settings.interval);
    (this.timer as Unrefable).unref?.();
    this.unsubscribe = this.registry.onStateChange((transition) => {
      // The listener runs inside the call that moved the breaker: queue the event and write
      // it after that call, in one batch with any other transition of the same turn.
      if (this.pending.push(transition) === 1) queueMicrotask(() => this.flushTransitions());
    });
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.pending = [];
  }

  private remove(res: ServerResponse): void {
    if (this.clients.delete(res) && this.clients.size === 0) this.stop();
  }

  private tick(): void {
    try {
      this.broadcast(this.snapshotFrame(false));
    } catch (error) {
      reportCallbackError(error, 'listener');
    }
  }

  private flushTransitions(): void {
    const transitions = this.pending;
    this.pending = [];
    let frames = '';
    for (const t of transitions) frames += `event: transition\ndata: ${safeJson(t)}\n\n`;
    if (frames !== '') this.broadcast(frames);
  }

  /**
   * A `snapshot` event: the registry's instances (keys capped per name), each with its
   * dashboard `row` when its kind has one; the `kinds` in words by name; when it was taken
   * (epoch ms, for rates between two events) and, on a stream's first event, the recent
   * transitions.
   */
  private snapshotFrame(withTransitions: boolean): string {
    const all = this.registry.instancesForMetrics();
    const { instances, omitted } = limitedSnapshot(all, this.settings.maxKeysPerName);
    const byName = new Map<string, AnyPolicyKind>();
    const kinds: Record<string, string> = {};
    for (const { kind } of all) {
      byName.set(kind.name, kind);
      kinds[kind.name] = kind.label;
    }
    const shown = instances.map((instance): object => {
      const row: DashboardRow | undefined = byName.get(instance.kind)?.dashboard?.(instance);
      return row === undefined ? instance : { ...instance, row };
    });
    const data = withTransitions
      ? {
          at: Date.now(),
          kinds,
          instances: shown,
          omitted,
          transitions: this.registry.recentTransitions(),
        }
      : { at: Date.now(), kinds, instances: shown, omitted };
    return `event: snapshot\ndata: ${safeJson(data)}\n\n`;
  }

  private broadcast(frame: string): void {
    for (const res of this.clients) this.write(res, frame);
  }

  private write(res: ServerResponse, frame: string): void {
    if (res.writableLength > MAX_BUFFERED) {
      res.destroy();
      return;
    }
    res.write(frame);
    // Compression middleware (Express `compression`) holds output until told to flush.
    (res as { flush?: () => void }).flush?.();
  }
}
