import { UsageError } from '../../errors/OptionsError.js';
import type { Pipeline } from '../../pipeline/Pipeline.js';
import type { AttemptFailure, Pushback } from '../../policies/shared/pushback.js';
import { KeyedInstances } from '../../registry/KeyedInstances.js';
import { duration } from '../../validation/validate.js';
import { requestContext } from '../context/requestContext.js';
import { readPushback } from '../headers/parse.js';
import type { ResolvedFetchOptions } from './options.js';
import { OriginPolicies, type OriginStats, originKind } from './origin.js';

/** A pushback longer than a call may wait, on the response that asked for it. */
export interface LongPushback {
  readonly response: Response;
  readonly wait: number;
  readonly allowed: number;
}

/** @internal What the engine keeps of one call: its deadline and what the pushback decided. */
export interface CallState {
  /** When the call must end, on the clock's scale. */
  readonly deadline: number;
  pushback: LongPushback | undefined;
}

/** What one request says of itself, for the engine to pick its pipeline and deadline. */
export interface RequestTraits {
  readonly origin: string;
  readonly method: string;
  readonly hasIdempotencyKey: boolean;
  /** True when its body can be sent again. */
  readonly replayable: boolean;
  readonly idempotent?: boolean | undefined;
  readonly retry?: boolean | undefined;
  readonly timeout?: unknown;
}

/** A call begun: the origin's policies, the pipeline to run and the call's state. */
export interface Begun {
  readonly policies: OriginPolicies;
  readonly pipeline: Pipeline<Response>;
  /** The call's own timeout for `execute`: the options' or the request's, the shorter. */
  readonly timeout: number;
  readonly hedged: boolean;
  readonly state: CallState;
}

/**
 * @internal The part every protected client shares (the fetch and the undici interceptor):
 * the origins and their policies, which pipeline a request takes, its deadline, and the server
 * pushback read from the responses it tracks.
 */
export class FetchEngine {
  private readonly origins: KeyedInstances<OriginPolicies>;
  private readonly byResponse = new WeakMap<Response, CallState>();
  private disposed = false;

  constructor(readonly o: ResolvedFetchOptions) {
    const retryAfter = (failure: AttemptFailure<Response>): Pushback => this.pushback(failure);
    const make = (origin: string) => new OriginPolicies(origin, o, retryAfter);
    // The policies' own options are checked now, by building (and dropping) a first set.
    make('http://validation.invalid').dispose();
    this.origins = new KeyedInstances(originKind(make), o.clock, o.maxOrigins, o.originIdleTimeout);
  }

  /** Starts a call: throws `UsageError` once disposed, `OptionsError` for a bad `timeout`. */
  begin(r: RequestTraits): Begun {
    if (this.disposed) throw new UsageError('This protected client was disposed');
    const o = this.o;
    const own = r.timeout === undefined ? Infinity : duration(r.timeout, 'timeout', Infinity, 0);
    const policies = this.origins.get(r.origin);
    const idempotent =
      r.idempotent ?? (o.idempotent || o.methods.has(r.method) || r.hasIdempotencyKey);
    const pipeline =
      !idempotent || r.retry === false || !r.replayable ? policies.once : policies.hedged;
    const context = requestContext();
    const timeout = Math.min(o.timeout, own);
    const left =
      context === undefined ? Infinity : Math.max(0, context.deadline - performance.now());
    return {
      policies,
      pipeline,
      timeout,
      hedged: pipeline === policies.hedged && policies.hedge !== undefined,
      state: { deadline: o.clock.now() + Math.min(timeout, left), pushback: undefined },
    };
  }

  /** Ties a response to its call, for the pushback to read the call's deadline. */
  track(response: Response, state: CallState): void {
    this.byResponse.set(response, state);
  }

  private pushback(failure: AttemptFailure<Response>): Pushback {
    const response = failure.result;
    if (response === undefined) return undefined;
    const wait = readPushback(response);
    if (typeof wait !== 'number') return wait;
    const state = this.byResponse.get(response);
    const left = state === undefined ? Infinity : state.deadline - this.o.clock.now();
    const allowed = Math.min(this.o.maxDelay, left);
    if (wait <= allowed) return wait;
    if (state !== undefined) state.pushback = { response, wait, allowed };
    return false;
  }

  stats(origin: string | URL): OriginStats | undefined;
  stats(): OriginStats[];
  stats(origin?: string | URL): OriginStats | OriginStats[] | undefined {
    if (origin === undefined) {
      const all: OriginStats[] = [];
      this.origins.forEachLive((_, p) => all.push(p.stats()));
      return all;
    }
    return this.origins.peek(new URL(String(origin)).origin)?.stats();
  }

  dispose(): void {
    this.disposed = true;
    this.origins.clear();
  }
}
