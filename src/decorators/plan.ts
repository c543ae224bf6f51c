import { UsageError } from '../errors/OptionsError.js';
import { Pipeline, type Policy } from '../pipeline/Pipeline.js';
import type { AnyPolicyKind } from '../protocol/kind.js';
import { StepKind } from '../protocol/step.js';
import { defaultRegistry, type Registry } from '../registry/Registry.js';
import { MAX_KEY_LENGTH } from '../validation/validate.js';
import type { SignalArgument } from './types.js';

/**
 * What one decorator contributes to a method's pipeline, in one of three forms. A spec is made
 * per decorated method, so a decorator value applied to two methods gives each its own policy.
 */
export type Spec =
  /** Fixed policies: a policy object, a pipeline's policies, or a policy shared by the class. */
  | { readonly form: 'fixed'; readonly policies: readonly Policy[]; readonly pipeline?: Pipeline }
  /** A new policy per object. */
  | { readonly form: 'per-instance'; readonly create: () => Policy }
  /** A policy looked up by name on first call, or per call by key. */
  | {
      readonly form: 'named';
      /** The kind the name is looked up under. */
      readonly kind: AnyPolicyKind;
      readonly name: string;
      readonly registry: Registry | undefined;
      readonly key: ((...args: unknown[]) => unknown) | undefined;
    };

/** A pipeline and how a decorated method calls it. */
interface Entry {
  readonly pipeline: Pipeline;
  /** Run with `executeSync`: the method is not `async` and no policy waits. */
  readonly sync: boolean;
  /** A step of the pipeline hands the function a signal of its own (a deadline's). */
  readonly ownSignal: boolean;
  /**
   * A call whose arguments hold no `AbortSignal` needs no signal handling: always, except
   * when the method takes a signal at a given index and the pipeline has one to give it.
   */
  readonly direct: boolean;
}

/** `signalAt` values besides an argument index. */
const NO_SIGNAL = -1;
const LAST = -2;

/** The plan of every decorated method, by the function that replaced it. */
const plans = new WeakMap<object, MethodPlan>();

/** The plan behind a function, if it is a method decorated here. */
export function planOf(fn: unknown): MethodPlan | undefined {
  return typeof fn === 'function' ? plans.get(fn) : undefined;
}

/**
 * A decorated method: its original function and the specs of its decorators, outermost first.
 * Decorators are applied innermost first (bottom-up), each making a new plan from the one below
 * it, so stacked decorators end as one plan and one pipeline rather than nested wrappers.
 */
export class MethodPlan {
  /** The decorated method's own function. */
  readonly original: (...args: unknown[]) => unknown;
  /** The method's name, for messages. */
  readonly name: string;
  /** Outermost first. */
  readonly specs: readonly Spec[];
  readonly signal: SignalArgument | undefined;
  /** Where the signal argument is: an index, {@link LAST} or {@link NO_SIGNAL}. */
  readonly signalAt: number;
  readonly perInstance: boolean;
  readonly keyed: boolean;
  /** An `async function`: it always returns a promise, so the call never runs synchronously. */
  readonly declaredAsync: boolean;
  /** The entry every call uses, once known (not per object, not keyed). */
  fixed: Entry | undefined = undefined;
  private shared: Binding | undefined = undefined;
  private perObject: WeakMap<object, Binding> | undefined = undefined;

  constructor(
    original: (...args: unknown[]) => unknown,
    name: string,
    specs: readonly Spec[],
    signal: SignalArgument | undefined,
  ) {
    this.original = original;
    this.name = name;
    this.specs = specs;
    this.signal = signal;
    this.signalAt =
      signal === false ? NO_SIGNAL : signal === undefined || signal === 'last' ? LAST : signal;
    this.perInstance = specs.some((s) => s.form === 'per-instance');
    this.keyed = specs.some((s) => s.form === 'named' && s.key !== undefined);
    this.declaredAsync = Object.prototype.toString.call(original) === '[object AsyncFunction]';
  }

  /** The policies and pipeline calls on `self` use (made on first use). */
  binding(self: unknown): Binding {
    if (!this.perInstance) return (this.shared ??= new Binding(this));
    if ((typeof self !== 'object' && typeof self !== 'function') || self === null) {
      throw new UsageError(
        `\`${this.name}\` has per-instance policies, so it must be called on an object (got this = ${String(self)})`,
      );
    }
    const map = (this.perObject ??= new WeakMap());
    let b = map.get(self);
    if (b === undefined) map.set(self, (b = new Binding(this)));
    return b;
  }

  /** The entry for a call on `self` with `args`. */
  entry(self: unknown, args: unknown[]): Entry {
    const b = this.binding(self);
    if (this.keyed) return b.keyedEntry(self, args);
    const e = b.entry!;
    if (!this.perInstance) this.fixed = e;
    return e;
  }
}

/** The resolved policies of a plan for one owner (the class, or one object). */
export class Binding {
  /** Set when no spec is keyed. */
  readonly entry: Entry | undefined;
  /** Per spec: its policies, or undefined for a keyed one. */
  private readonly parts: (readonly Policy[] | undefined)[];
  /** Keyed pipelines: nested maps by each keyed instance, so evicted instances free them. */
  private readonly cache: WeakMap<object, unknown> | undefined;

  constructor(private readonly plan: MethodPlan) {
    const specs = plan.specs;
    this.parts = specs.map((spec): readonly Policy[] | undefined => {
      if (spec.form === 'fixed') return spec.policies;
      if (spec.form === 'per-instance') return [spec.create()];
      return spec.key !== undefined ? undefined : [named(spec)];
    });
    if (plan.keyed) {
      this.entry = undefined;
      this.cache = new WeakMap();
    } else {
      // One usePipeline alone: calls go through that very pipeline.
      const only =
        specs.length === 1 && specs[0]!.form === 'fixed' ? specs[0]!.pipeline : undefined;
      this.entry = makeEntry(only ?? new Pipeline(this.parts.flat() as Policy[]), plan);
      this.cache = undefined;
    }
  }

  /** The entry for a call with keyed specs: keys computed, instances fetched, pipeline cached. */
  keyedEntry(self: unknown, args: unknown[]): Entry {
    const specs = this.plan.specs;
    let node = this.cache!;
    let instances: Policy[] | undefined;
    let entry: Entry | undefined;
    let last: Policy | undefined;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i]!;
      if (spec.form !== 'named' || spec.key === undefined) continue;
      const key = spec.key.apply(self, args);
      if (typeof key !== 'string' || key.length > MAX_KEY_LENGTH) {
        const got = typeof key === 'string' ? `a string of ${key.length} characters` : typeof key;
        throw new UsageError(
          `The \`key\` function of ${spec.kind.name} "${spec.name}" must return a string of at most ${MAX_KEY_LENGTH} characters, got ${got}`,
        );
      }
      const instance = (spec.registry ?? defaultRegistry).getKeyed<Policy>(
        spec.kind,
        spec.name,
        key,
      );
      (instances ??= []).push(instance);
      if (last !== undefined) {
        let next = node.get(last) as WeakMap<object, unknown> | undefined;
        if (next === undefined) node.set(last, (next = new WeakMap()));
        node = next;
      }
      last = instance;
    }
    entry = node.get(last!) as Entry | undefined;
    if (entry === undefined) {
      let k = 0;
      const policies = this.parts.flatMap((p) => p ?? [instances![k++]!]);
      entry = makeEntry(new Pipeline(policies), this.plan);
      node.set(last!, entry);
    }
    return entry;
  }
}

function named(spec: Extract<Spec, { form: 'named' }>): Policy {
  return (spec.registry ?? defaultRegistry).get<Policy>(spec.kind, spec.name);
}

function makeEntry(pipeline: Pipeline, plan: MethodPlan): Entry {
  const policies = pipeline.policies;
  const sync = !plan.declaredAsync && policies.every(neverWaits);
  const ownSignal = policies.some((p) => p.needs().ownSignal);
  return { pipeline, sync, ownSignal, direct: sync || !(ownSignal && plan.signalAt >= 0) };
}

/** The same test `Pipeline` applies before it allows `executeSync`. */
function neverWaits(p: Policy): boolean {
  return p.stepKind === StepKind.Fallback || (p.stepKind === StepKind.Gate && !p.mayWait);
}

const AbortSignalClass = typeof AbortSignal === 'function' ? AbortSignal : undefined;

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    AbortSignalClass !== undefined &&
    value instanceof AbortSignalClass
  );
}

type Method = (...args: unknown[]) => unknown;

/**
 * The function that replaces a decorated method. For a method of up to three parameters called
 * with at most that many arguments, a wrapper with the same parameters forwards them with a
 * plain call (no rest array, no `apply`), so that a decorated call costs about what a direct
 * `pipeline.execute(() => obj.method(a, b))` costs; anything else takes {@link callGeneral}.
 */
export function makeWrapper(plan: MethodPlan): Method {
  const original = plan.original;
  const arity = original.length;
  const signalAt = plan.signalAt;
  let wrapper: Method;
  // `arguments.length` gives the number of arguments (forwarded as they came) without the array
  // a rest parameter would allocate on every call. Each argument count has its own closure and
  // its own pipeline call, so each call site sees one closure: the method can be inlined and
  // the closure optimized away (one call site choosing between closures defeats both).
  // biome-ignore-start lint/complexity/noArguments: see above
  switch (arity) {
    case 0:
      wrapper = function (this: unknown): unknown {
        const entry = plan.fixed;
        if (entry?.direct && arguments.length === 0) return run(entry, () => original.call(this));
        return callGeneral(plan, this, copy(arguments));
      };
      break;
    case 1:
      wrapper = function (this: unknown, a: unknown): unknown {
        const entry = plan.fixed;
        const n = arguments.length;
        if (entry?.direct && (entry.sync || !isAbortSignal(pick(signalAt, n, a)))) {
          if (n === 1) return run(entry, () => original.call(this, a));
          if (n === 0) return run(entry, () => original.call(this));
        }
        return callGeneral(plan, this, copy(arguments));
      };
      break;
    case 2:
      wrapper = function (this: unknown, a: unknown, b: unknown): unknown {
        const entry = plan.fixed;
        const n = arguments.length;
        if (entry?.direct && (entry.sync || !isAbortSignal(pick(signalAt, n, a, b)))) {
          if (n === 2) return run(entry, () => original.call(this, a, b));
          if (n === 1) return run(entry, () => original.call(this, a));
          if (n === 0) return run(entry, () => original.call(this));
        }
        return callGeneral(plan, this, copy(arguments));
      };
      break;
    case 3:
      wrapper = function (this: unknown, a: unknown, b: unknown, c: unknown): unknown {
        const entry = plan.fixed;
        const n = arguments.length;
        if (entry?.direct && (entry.sync || !isAbortSignal(pick(signalAt, n, a, b, c)))) {
          if (n === 3) return run(entry, () => original.call(this, a, b, c));
          if (n === 2) return run(entry, () => original.call(this, a, b));
          if (n === 1) return run(entry, () => original.call(this, a));
          if (n === 0) return run(entry, () => original.call(this));
        }
        return callGeneral(plan, this, copy(arguments));
      };
      break;
    default:
      wrapper = function (this: unknown, ...args: unknown[]): unknown {
        return callGeneral(plan, this, args);
      };
  }
  // biome-ignore-end lint/complexity/noArguments: see above
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  Object.defineProperty(wrapper, 'length', { value: arity, configurable: true });
  plans.set(wrapper, plan);
  return wrapper;
}

/** The argument where a call of `n` arguments would have its signal, if any. */
function pick(signalAt: number, n: number, a: unknown, b?: unknown, c?: unknown): unknown {
  const at = signalAt === LAST ? n - 1 : signalAt;
  return at === 0 ? a : at === 1 ? b : at === 2 ? c : undefined;
}

function run(entry: Entry, call: () => unknown): unknown {
  return entry.sync ? entry.pipeline.executeSync(call) : entry.pipeline.execute(call);
}

function copy(args: IArguments): unknown[] {
  const out = new Array<unknown>(args.length);
  for (let i = 0; i < args.length; i++) out[i] = args[i];
  return out;
}

/** Any call: resolves the pipeline if needed, finds the signal, runs sync or async. */
function callGeneral(plan: MethodPlan, self: unknown, args: unknown[]): unknown {
  const original = plan.original;
  let entry = plan.fixed;
  if (entry === undefined) {
    try {
      entry = plan.entry(self, args);
    } catch (error) {
      if (plan.declaredAsync) return Promise.reject(error);
      throw error;
    }
  }
  if (entry.sync) return entry.pipeline.executeSync(() => original.apply(self, args));
  const signalAt = plan.signalAt;
  const at = signalAt === LAST ? args.length - 1 : signalAt;
  const arg = at >= 0 ? args[at] : undefined;
  const signal = isAbortSignal(arg) ? arg : undefined;
  const options = signal === undefined ? undefined : { signal };
  // With a step that owns a signal (a deadline) the method gets the execution's signal (it
  // follows the caller's and also aborts at the deadline); otherwise it is the caller's own.
  if (entry.ownSignal && (signal !== undefined || (signalAt >= 0 && arg === undefined))) {
    return entry.pipeline.execute((context) => {
      args[at] = context.signal;
      return original.apply(self, args);
    }, options);
  }
  return entry.pipeline.execute(() => original.apply(self, args), options);
}
