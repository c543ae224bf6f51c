/**
 * A policy kind defined outside the library that answers calls with a value of its own: a stub
 * for tests and fault drills. It answers a share of calls with a canned value (`answerRate`),
 * fails a share with an injected fault that stands for the dependency's failure (`faultRate`:
 * a refusal marked as having reached the dependency, so a breaker outside counts it), and lets
 * at most `limit` calls through at once, the others waiting in a public `WaitLine` for up to
 * `maxWait` ms. It is built with the public protocol alone and given to a registry with its
 * `kinds` option, so tests show every surface of the library takes such a kind.
 */
import { channel } from 'node:diagnostics_channel';
import {
  type Clock,
  type ErrorCode,
  OptionsError,
  PolicyRejectedError,
  systemClock,
  UsageError,
} from '../../src/index.js';
import {
  ANSWERED,
  type AnsweringGate,
  configSchema,
  type InstanceView,
  type KeyedGroup,
  type KeyedInstancesView,
  type KindMetrics,
  type MetricFamilyDescriptor,
  NEEDS_NOTHING,
  Outcome,
  type PolicyKindDescriptor,
  REJECTED,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
  WaitLine,
} from '../../src/kinds/index.js';

/** An injected fault: the stub fails the call as its dependency would have. */
export class InjectedFaultError extends PolicyRejectedError {
  constructor(name: string) {
    super('ERR_EXAMPLE_FAULT' as ErrorCode, `${name}: injected fault`, 'stub', name, true);
  }
}

/** No permit came within `maxWait`, or the line was full: refused without calling. */
export class StubBusyError extends PolicyRejectedError {
  constructor(name: string, why: string) {
    super('ERR_EXAMPLE_STUB_BUSY' as ErrorCode, `${name}: ${why}`, 'stub', name);
  }
}

export interface StubOptions {
  /** Share of calls answered with `answer`, in [0, 1]. @default 0 */
  readonly answerRate?: number;
  /** Share of calls failed with an {@link InjectedFaultError}, in [0, 1]. @default 0 */
  readonly faultRate?: number;
  /** The value answered calls end with. @default null */
  readonly answer?: unknown;
  /** Calls let through at once. @default 10 */
  readonly limit?: number;
  /** ms a call waits for a permit. @default 1000 */
  readonly maxWait?: number;
  /** Calls that may wait at once; 0 for a stub that never makes a call wait. @default 100 */
  readonly maxQueue?: number;
  /** Time one call in this many for a latency histogram (0: none; it keeps none). @default 0 */
  readonly latencyEvery?: number;
  readonly name?: string;
  readonly clock?: Clock;
  /** The source of the draws that pick answered and faulted calls. @default Math.random */
  readonly random?: () => number;
}

export interface ResolvedStubOptions {
  answerRate: number;
  faultRate: number;
  answer: unknown;
  limit: number;
  maxWait: number;
  maxQueue: number;
  latencyEvery: number;
  name: string;
  clock: Clock;
  random: () => number;
}

export interface StubStats {
  readonly inFlight: number;
  readonly waiting: number;
  readonly passed: number;
  readonly answered: number;
  readonly faulted: number;
  readonly refused: number;
}

const KEYS = new Set([
  'answerRate',
  'faultRate',
  'answer',
  'limit',
  'maxWait',
  'maxQueue',
  'latencyEvery',
  'name',
  'clock',
  'random',
]);

function share(o: Record<string, unknown>, key: string): number {
  const v = o[key] ?? 0;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new OptionsError(key, v, 'in [0, 1]');
  return v;
}

function int(o: Record<string, unknown>, key: string, fallback: number, min: number): number {
  const v = o[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 10_000) {
    throw new OptionsError(key, v, `an integer in [${min}, 10000]`);
  }
  return v;
}

export function resolveStubOptions(options: unknown): ResolvedStubOptions {
  const o = (options ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KEYS.has(key)) throw new OptionsError(key, o[key], 'no such option');
  }
  const answerRate = share(o, 'answerRate');
  const faultRate = share(o, 'faultRate');
  if (answerRate + faultRate > 1) {
    throw new OptionsError('answerRate', answerRate, `at most 1 - faultRate (${1 - faultRate})`);
  }
  const maxWait = o.maxWait ?? 1000;
  if (typeof maxWait !== 'number' || !(maxWait >= 1 && maxWait <= 3_600_000)) {
    throw new OptionsError('maxWait', maxWait, 'a number of ms in [1, 3600000]');
  }
  return {
    answerRate,
    faultRate,
    answer: o.answer ?? null,
    limit: int(o, 'limit', 10, 1),
    maxWait,
    maxQueue: int(o, 'maxQueue', 100, 0),
    latencyEvery: int(o, 'latencyEvery', 0, 0),
    name: typeof o.name === 'string' ? o.name : 'stub',
    clock: (o.clock as Clock | undefined) ?? systemClock,
    random: (o.random as (() => number) | undefined) ?? Math.random,
  };
}

/** The channel a stub publishes each answer to, which its span event is made from. */
export const STUB_ANSWERED_CHANNEL = 'example.stub.answered';
const answered = channel(STUB_ANSWERED_CHANNEL);

/** The engine: a gate that answers, faults, admits or makes calls wait. */
export class Stub implements AnsweringGate, WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  /** Fixed when built: a pipeline plans its path from them once. */
  readonly latencyEvery: number;
  readonly mayWait: boolean;
  inFlight = 0;
  passed = 0;
  answered = 0;
  faulted = 0;
  refused = 0;
  disposed = false;
  private line: WaitLine;
  private readonly fault: InjectedFaultError;
  private readonly busy: StubBusyError;
  private readonly late: StubBusyError;
  /** The refusal `admit` just made: the fault or the full line. */
  private refusal: Error;

  constructor(public o: ResolvedStubOptions) {
    this.latencyEvery = o.latencyEvery;
    this.mayWait = o.maxQueue > 0;
    this.fault = new InjectedFaultError(o.name);
    this.busy = new StubBusyError(o.name, 'the wait line is full');
    this.late = new StubBusyError(o.name, 'no permit came in time');
    this.refusal = this.fault;
    this.line = this.newLine();
  }

  get name(): string {
    return this.o.name;
  }

  /** `answering` or `faulting` while it answers or faults some calls, else `passing`. */
  get state(): 'passing' | 'answering' | 'faulting' {
    if (this.o.faultRate > 0) return 'faulting';
    return this.o.answerRate > 0 ? 'answering' : 'passing';
  }

  /** Takes new options; calls waiting keep the line they are in. */
  configure(o: ResolvedStubOptions): void {
    const waitChanged = o.maxWait !== this.o.maxWait || o.maxQueue !== this.o.maxQueue;
    this.o = o;
    if (waitChanged && this.line.length === 0) this.line = this.newLine();
  }

  stats(): StubStats {
    const { inFlight, passed, answered, faulted, refused } = this;
    return { inFlight, waiting: this.line.length, passed, answered, faulted, refused };
  }

  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true, mayWait: this.mayWait, mayAnswer: true };
  }

  admit(): number {
    const { faultRate, answerRate } = this.o;
    const draw = faultRate + answerRate > 0 ? this.o.random() : 1;
    if (draw < faultRate) {
      this.faulted++;
      this.refusal = this.fault;
      return REJECTED;
    }
    if (draw < faultRate + answerRate) {
      this.answered++;
      if (answered.hasSubscribers) answered.publish({ kind: 'stub', name: this.o.name });
      return ANSWERED;
    }
    if (this.inFlight < this.o.limit) {
      this.inFlight++;
      this.passed++;
      return 0;
    }
    if (!this.line.full) return WAIT;
    this.refused++;
    this.refusal = this.busy;
    return REJECTED;
  }

  answer(): unknown {
    return this.o.answer;
  }

  enqueue(exec: WaitingExecution, step: number, now: number): number {
    return this.line.enqueue(exec, step, now);
  }

  leave(): void {
    this.line.leave();
  }

  release(_token: number, _outcome: Outcome): void {
    // The permit goes to the oldest waiting call, if any.
    if (this.line.admitNext()) this.passed++;
    else this.inFlight--;
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
    return this.refusal;
  }

  dispose(): void {
    this.disposed = true;
    this.line.rejectAll(new UsageError(`stub "${this.o.name}" was disposed`));
  }

  private newLine(): WaitLine {
    return new WaitLine({
      timeout: this.o.maxWait,
      maxLength: this.o.maxQueue,
      clock: this.o.clock,
      timedOut: () => {
        this.refused++;
        return this.late;
      },
    });
  }
}

export const stubFamilies = {
  answered: {
    name: 'example_stub_answered_total',
    type: 'counter',
    help: 'Calls a stub answered with its own value.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'example.stub.answered', kind: 'counter' },
  },
  faulted: {
    name: 'example_stub_faulted_total',
    type: 'counter',
    help: 'Calls a stub failed with an injected fault.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'example.stub.faulted', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

interface StubCounts {
  answered: number;
  faulted: number;
}

const stubMetrics: KindMetrics<Stub, StubCounts> = {
  families: Object.values(stubFamilies),
  counts: () => ({ answered: 0, faulted: 0 }),
  add(c, stub) {
    c.answered += stub.answered;
    c.faulted += stub.faulted;
  },
  addCounts(c, other) {
    c.answered += other.answered;
    c.faulted += other.faulted;
  },
  isEmpty: (c) => c.answered === 0 && c.faulted === 0,
  series(sink, name, key, c) {
    sink.add(stubFamilies.answered, { name, key }, c.answered);
    sink.add(stubFamilies.faulted, { name, key }, c.faulted);
  },
};

const view = (stub: Stub): InstanceView => ({ state: stub.state, stats: stub.stats() });

/** The keyed stubs of one name; a stub with nothing in flight or waiting keeps nothing. */
class StubGroup implements KeyedGroup<Stub, ResolvedStubOptions, StubCounts> {
  readonly stride = 0;
  readonly latency = undefined;
  readonly retired: StubCounts = { answered: 0, faulted: 0 };
  instances!: KeyedInstancesView<Stub>;

  constructor(
    private readonly name: string,
    public options: ResolvedStubOptions,
  ) {}

  create(key: string): Stub {
    return new Stub({ ...this.options, name: `${this.name}:${key}` });
  }
  revive(): void {}
  shelve(stub: Stub): boolean {
    if (this.isProtected(stub)) return false;
    this.retire(stub);
    return true;
  }
  isProtected(stub: Stub): boolean {
    return stub.inFlight !== 0 || stub.stats().waiting !== 0;
  }
  retire(stub: Stub | undefined): void {
    if (stub === undefined) return;
    this.retired.answered += stub.answered;
    this.retired.faulted += stub.faulted;
  }
  dispose(stub: Stub): void {
    stub.dispose();
  }
  check(): void {}
  apply(options: ResolvedStubOptions, keep: readonly Stub[]): void {
    this.options = options;
    for (const stub of keep) stub.configure({ ...options, name: stub.name });
  }
  view(stub: Stub | undefined): InstanceView {
    if (stub !== undefined) return view(stub);
    const s = new Stub(this.options);
    return view(s);
  }
}

/** The stub kind: `defaults.stub` and `stubs` in config data. */
export const stubKind: PolicyKindDescriptor<Stub, ResolvedStubOptions, StubCounts> = {
  name: 'stub',
  label: 'stub',
  section: 'stubs',
  is: (value): value is Stub => value instanceof Stub,
  create: (options) => new Stub(resolveStubOptions(options)),
  resolve: resolveStubOptions,
  reconfigure: (stub, options) => () => stub.configure(options),
  dispose: (stub) => stub.dispose(),
  view,
  config: {
    schema: configSchema([
      ['answerRate', 'value'],
      ['faultRate', 'value'],
      ['answer', 'value'],
      ['limit', 'value'],
      ['maxWait', 'duration'],
      ['maxQueue', 'value'],
    ]),
    codeOnly: ['random', 'latencyEvery'],
  },
  keyed: (name, options) => new StubGroup(name, options),
  state: (stub) => stub.state,
  restState: 'passing',
  health: (state) => (state === 'faulting' ? 'degraded' : 'ok'),
  metrics: stubMetrics,
  dashboard({ stats }) {
    const s = stats as StubStats;
    return {
      calls: s.passed + s.answered,
      rejected: s.faulted + s.refused,
      detail: `${s.answered} answered, ${s.faulted} faulted, ${s.waiting} waiting`,
    };
  },
  spanEvents: [
    {
      channel: STUB_ANSWERED_CHANNEL,
      name: 'example.stub.answered',
      attributes: (m) => (m.kind === 'stub' ? { 'example.stub.name': String(m.name) } : undefined),
    },
  ],
};
