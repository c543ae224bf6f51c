/**
 * A policy kind defined outside the library, with the public protocol alone: a concurrency
 * cap (at most `limit` calls at once) that can be stopped by hand for a `cooldown`. Its
 * descriptor gives it config data, keyed instances, snapshots, metrics, health and a
 * dashboard row, so tests can show that every part of the library takes a kind it does not
 * know.
 */
import {
  type Clock,
  type ErrorCode,
  OptionsError,
  PolicyRejectedError,
  systemClock,
} from '../../src/index.js';
import {
  configSchema,
  counter,
  declareMetrics,
  type Gate,
  gauge,
  type InstanceView,
  type KeyedGroup,
  type KeyedInstancesView,
  NEEDS_NOTHING,
  Outcome,
  type PolicyKindDescriptor,
  REJECTED,
  StepKind,
  type StepNeeds,
} from '../../src/kinds/index.js';

export class CapReachedError extends PolicyRejectedError {
  constructor(name: string) {
    super('ERR_EXAMPLE_CAP' as ErrorCode, `${name}: the cap is reached`, 'concurrencyCap', 'cap');
  }
}

export interface CapOptions {
  /** Calls at once. @default 10 */
  readonly limit?: number;
  /** ms a stopped cap refuses every call. @default 1000 */
  readonly cooldown?: number;
  readonly name?: string;
  readonly clock?: Clock;
}

export interface ResolvedCapOptions {
  limit: number;
  cooldown: number;
  name: string;
  clock: Clock;
}

export interface CapStats {
  readonly inFlight: number;
  readonly limit: number;
  readonly admitted: number;
  readonly refused: number;
}

const KEYS = new Set(['limit', 'cooldown', 'name', 'clock']);

export function resolveCapOptions(options: unknown): ResolvedCapOptions {
  const o = (options ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KEYS.has(key)) throw new OptionsError(key, o[key], 'no such option (limit, cooldown)');
  }
  const limit = o.limit ?? 10;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new OptionsError('limit', limit, 'an integer in [1, 1000]');
  }
  const cooldown = o.cooldown ?? 1000;
  if (typeof cooldown !== 'number' || !(cooldown >= 1 && cooldown <= 3_600_000)) {
    throw new OptionsError('cooldown', cooldown, 'a number of ms in [1, 3600000]');
  }
  return {
    limit,
    cooldown,
    name: typeof o.name === 'string' ? o.name : 'cap',
    clock: (o.clock as Clock | undefined) ?? systemClock,
  };
}

/** The engine: a gate that admits `limit` calls at once, and none while stopped. */
export class ConcurrencyCap implements Gate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery = 0;
  readonly mayWait = false;
  inFlight = 0;
  admitted = 0;
  refused = 0;
  disposed = false;
  private stoppedUntil = Number.NEGATIVE_INFINITY;
  private readonly error: CapReachedError;

  constructor(public o: ResolvedCapOptions) {
    this.error = new CapReachedError(o.name);
  }

  get name(): string {
    return this.o.name;
  }

  /** `accepting` (at rest), `full`, or `stopped` (for `cooldown` ms after {@link stop}). */
  get state(): 'accepting' | 'full' | 'stopped' {
    if (this.o.clock.now() < this.stoppedUntil) return 'stopped';
    return this.inFlight >= this.o.limit ? 'full' : 'accepting';
  }

  stop(): void {
    this.stoppedUntil = this.o.clock.now() + this.o.cooldown;
  }

  stats(): CapStats {
    const { inFlight, admitted, refused } = this;
    return { inFlight, limit: this.o.limit, admitted, refused };
  }

  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true };
  }
  admit(now: number): number {
    if (this.inFlight >= this.o.limit || now < this.stoppedUntil) {
      this.refused++;
      return REJECTED;
    }
    this.admitted++;
    return this.inFlight++;
  }
  release(_token: number, _outcome: Outcome): void {
    this.inFlight--;
  }
  releaseSuccess(token: number): void {
    this.release(token, Outcome.Success);
  }
  classifyError(): Outcome {
    return Outcome.Failure;
  }
  classifyResult(): Outcome {
    return Outcome.Success;
  }
  rejection(): Error {
    return this.error;
  }
  dispose(): void {
    this.disposed = true;
  }
}

interface CapCounts {
  inFlight: number;
  refused: number;
}

const { families: capFamilies, metrics: capMetrics } = declareMetrics<
  ConcurrencyCap,
  CapCounts,
  keyof CapCounts
>({
  namespace: 'example',
  prefix: 'concurrency_cap',
  readings: {
    inFlight: gauge('{call}', 'Calls in flight through a concurrency cap.'),
    refused: counter('{call}', 'Calls a concurrency cap refused.'),
  },
});

export { capFamilies };

const view = (cap: ConcurrencyCap): InstanceView => ({ state: cap.state, stats: cap.stats() });

/** The keyed caps of one name; an idle cap (nothing in flight, not stopped) keeps nothing. */
class CapGroup implements KeyedGroup<ConcurrencyCap, ResolvedCapOptions, CapCounts> {
  readonly stride = 0;
  readonly latency = undefined;
  readonly retired: CapCounts = { inFlight: 0, refused: 0 };
  instances!: KeyedInstancesView<ConcurrencyCap>;

  constructor(
    private readonly name: string,
    public options: ResolvedCapOptions,
  ) {}

  create(key: string): ConcurrencyCap {
    return new ConcurrencyCap({ ...this.options, name: `${this.name}:${key}` });
  }
  revive(): void {}
  shelve(cap: ConcurrencyCap): boolean {
    if (cap.state !== 'accepting' || cap.inFlight !== 0) return false;
    this.retired.refused += cap.refused;
    return true;
  }
  isProtected(cap: ConcurrencyCap): boolean {
    return cap.inFlight !== 0 || cap.state === 'stopped';
  }
  retire(cap: ConcurrencyCap | undefined): void {
    if (cap !== undefined) this.retired.refused += cap.refused;
  }
  dispose(cap: ConcurrencyCap): void {
    cap.dispose();
  }
  check(): void {}
  apply(options: ResolvedCapOptions, keep: readonly ConcurrencyCap[]): void {
    this.options = options;
    for (const cap of keep) cap.o = { ...options, name: cap.name };
  }
  view(cap: ConcurrencyCap | undefined): InstanceView {
    if (cap !== undefined) return view(cap);
    const stats: CapStats = { inFlight: 0, limit: this.options.limit, admitted: 0, refused: 0 };
    return { state: 'accepting', stats };
  }
}

/** The concurrency cap kind: `defaults.concurrencyCap` and `concurrencyCaps` in config data. */
export const concurrencyCapKind: PolicyKindDescriptor<
  ConcurrencyCap,
  ResolvedCapOptions,
  CapCounts
> = {
  name: 'concurrencyCap',
  label: 'concurrency cap',
  section: 'concurrencyCaps',
  is: (value): value is ConcurrencyCap => value instanceof ConcurrencyCap,
  create: (options) => new ConcurrencyCap(resolveCapOptions(options)),
  resolve: resolveCapOptions,
  reconfigure: (cap, options) => () => {
    cap.o = options;
  },
  dispose: (cap) => cap.dispose(),
  view,
  config: {
    schema: configSchema([
      ['limit', 'value'],
      ['cooldown', 'duration'],
    ]),
  },
  keyed: (name, options) => new CapGroup(name, options),
  state: (cap) => cap.state,
  restState: 'accepting',
  health: (state) => (state === 'stopped' ? 'down' : state === 'full' ? 'degraded' : 'ok'),
  metrics: capMetrics,
  dashboard({ stats }) {
    const s = stats as CapStats;
    return {
      calls: s.admitted,
      rejected: s.refused,
      levels: { 'at once': s.inFlight, limit: s.limit },
      levelsLabel: 'calls at once',
      detail: `${s.inFlight} / ${s.limit} at once`,
    };
  },
};
