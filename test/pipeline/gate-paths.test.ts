/**
 * Every path a pipeline of gates can take (the lone gate's, the gates-only path, the general
 * executor, `executeSync`, timed calls, gates that make calls wait) admits and releases gates
 * the same way: random sequences of gate answers and call outcomes, run through each path,
 * give the same results and the same release log as a model of the gate protocol. Gates are
 * defined here with the public protocol alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Clock,
  type ErrorCode,
  type Pipeline,
  PolicyRejectedError,
  pipeline,
} from '../../src/index.js';
import {
  type Gate,
  NEEDS_NOTHING,
  Outcome,
  REJECTED,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../../src/kinds/index.js';
import { ManualClock } from '../../src/testing/index.js';

/** A gate's answer to one call that reaches it. */
type Answer = 'admit' | 'refuse' | 'refuseReached' | 'waitAdmit' | 'waitRefuse';
/** How the function ends: a value its gates count as a success, one they count as a failure, a throw. */
type Ending = 'ok' | 'bad' | 'throw';

interface CallPlan {
  /** One answer per gate, outermost first (used only if the call reaches the gate). */
  readonly answers: readonly Answer[];
  readonly ending: Ending;
  readonly async: boolean;
}

class ScriptedRefusal extends PolicyRejectedError {
  constructor(
    readonly gate: string,
    readonly reached: boolean,
  ) {
    super('ERR_SCRIPTED' as ErrorCode, `${gate} refused`, 'scripted', gate, reached);
  }
}

const boom = new Error('boom');

/**
 * A gate that answers each call as its script says, and logs every release. A refusal that
 * reached the dependency counts as a failure for the gates outside it; one that did not is
 * ignored; a 'bad' value is a failure.
 */
class ScriptedGate implements WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery: number;
  private nextToken = 1;
  private readonly held = new Set<number>();
  private error: Error = new ScriptedRefusal('none', false);
  private readonly answers: Answer[] = [];

  constructor(
    readonly name: string,
    private readonly log: string[],
    readonly mayWait: boolean,
    /** On a clock cheap to read, a gate that keeps latency makes every call timed. */
    readonly clock: Clock | undefined,
  ) {
    this.latencyEvery = clock === undefined ? 0 : 1;
  }

  script(answer: Answer): void {
    this.answers.push(answer);
  }

  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true, mayWait: this.mayWait };
  }

  admit(): number {
    const answer = this.answers.shift();
    if (answer === undefined) throw new Error(`${this.name} was asked more than scripted`);
    if (answer === 'admit') return this.take();
    if (answer === 'refuse' || answer === 'refuseReached') {
      this.error = new ScriptedRefusal(this.name, answer === 'refuseReached');
      return REJECTED;
    }
    this.pending = answer;
    return WAIT;
  }

  private pending: Answer = 'admit';

  enqueue(exec: WaitingExecution, step: number): number {
    const answer = this.pending;
    queueMicrotask(() => {
      if (answer === 'waitAdmit') exec.queueAdmitted(step, this.take());
      else exec.queueRejected(step, new ScriptedRefusal(this.name, false));
    });
    return 1;
  }

  leave(): void {}

  private take(): number {
    const token = this.nextToken++;
    this.held.add(token);
    return token;
  }

  release(token: number, outcome: Outcome): void {
    if (!this.held.delete(token)) throw new Error(`${this.name}: token ${token} released twice`);
    this.log.push(`${this.name}#${token}:${outcome}`);
  }

  releaseSuccess(token: number, value: unknown): void {
    this.release(token, this.classifyResult(value));
  }

  classifyError(error: unknown): Outcome {
    if (error instanceof ScriptedRefusal) return error.reached ? Outcome.Failure : Outcome.Ignored;
    return Outcome.Failure;
  }

  classifyResult(value: unknown): Outcome {
    return value === 'bad' ? Outcome.Failure : Outcome.Success;
  }

  rejection(): Error {
    return this.error;
  }

  dispose(): void {}
}

/** What a call came to, comparable across paths. */
type Seen = string;

function describeOutcome(ok: boolean, value: unknown): Seen {
  if (ok) return `ok:${String(value)}`;
  if (value instanceof ScriptedRefusal) return `refused:${value.gate}:${value.reached}`;
  if (value === boom) return 'threw';
  return `other:${String(value)}`;
}

/** The model: what the gate protocol says each call comes to, and the releases it makes. */
function model(gates: number, calls: readonly CallPlan[]): { seen: Seen[]; log: string[] } {
  const tokens = new Array(gates).fill(0);
  const seen: Seen[] = [];
  const log: string[] = [];
  const name = (i: number) => `g${i}`;
  for (const call of calls) {
    const admitted: number[] = [];
    let refusal: ScriptedRefusal | undefined;
    for (let i = 0; i < gates; i++) {
      const answer = call.answers[i]!;
      if (answer === 'admit' || answer === 'waitAdmit') {
        admitted.push(++tokens[i]);
        continue;
      }
      refusal = new ScriptedRefusal(name(i), answer === 'refuseReached');
      break;
    }
    let outcome: Outcome;
    if (refusal !== undefined) {
      seen.push(describeOutcome(false, refusal));
      outcome = refusal.reached ? Outcome.Failure : Outcome.Ignored;
    } else if (call.ending === 'throw') {
      seen.push('threw');
      outcome = Outcome.Failure;
    } else {
      seen.push(`ok:${call.ending}`);
      outcome = call.ending === 'bad' ? Outcome.Failure : Outcome.Success;
    }
    for (let i = admitted.length - 1; i >= 0; i--) log.push(`${name(i)}#${admitted[i]}:${outcome}`);
  }
  return { seen, log };
}

type Path = 'execute' | 'tryExecute' | 'executeSync' | 'executeGeneral' | 'tryExecuteGeneral';

interface Variant {
  readonly path: Path;
  /** Gates keep latency on a manual clock: every call is timed. */
  readonly timed: boolean;
  /** Gates may make calls wait (only the general executor runs those). */
  readonly waits: boolean;
}

function fnFor(call: CallPlan, forceSync: boolean): () => unknown {
  if (call.ending === 'throw') {
    if (call.async && !forceSync) return () => Promise.reject(boom);
    return () => {
      throw boom;
    };
  }
  const value = call.ending;
  return call.async && !forceSync ? () => Promise.resolve(value) : () => value;
}

async function runOne(p: Pipeline, path: Path, call: CallPlan): Promise<Seen> {
  const general = { criticality: 'critical' } as const;
  switch (path) {
    case 'executeSync':
      try {
        return describeOutcome(true, p.executeSync(fnFor(call, true)));
      } catch (error) {
        return describeOutcome(false, error);
      }
    case 'execute':
    case 'executeGeneral':
      return p.execute(fnFor(call, false), path === 'execute' ? undefined : general).then(
        (v) => describeOutcome(true, v),
        (e: unknown) => describeOutcome(false, e),
      );
    default: {
      const r = await p.tryExecute(fnFor(call, false), path === 'tryExecute' ? undefined : general);
      return r.ok ? describeOutcome(true, r.value) : describeOutcome(false, r.error);
    }
  }
}

async function runPath(
  variant: Variant,
  n: number,
  calls: readonly CallPlan[],
): Promise<{ seen: Seen[]; log: string[] }> {
  const log: string[] = [];
  const clock = variant.timed ? new ManualClock() : undefined;
  const gates = Array.from(
    { length: n },
    (_, i) => new ScriptedGate(`g${i}`, log, variant.waits, clock),
  );
  const p = pipeline(...(gates as Gate[]));
  const seen: Seen[] = [];
  for (const call of calls) {
    call.answers.forEach((a, i) => {
      // Each gate is asked only if the gates outside it admitted the call.
      if (call.answers.slice(0, i).every((b) => b === 'admit' || b === 'waitAdmit'))
        gates[i]!.script(a);
    });
    seen.push(await runOne(p, variant.path, call));
  }
  return { seen, log };
}

function callsArb(n: number, answers: readonly Answer[]) {
  return fc.array(
    fc.record({
      answers: fc.array(fc.constantFrom(...answers), { minLength: n, maxLength: n }),
      ending: fc.constantFrom<Ending>('ok', 'bad', 'throw'),
      async: fc.boolean(),
    }),
    { minLength: 1, maxLength: 8 },
  );
}

const immediate: Answer[] = ['admit', 'admit', 'refuse', 'refuseReached'];

/** Random call sequences through 1 to 3 gates answering from `answers`, checked against the model. */
function matchesModel(variant: Variant, answers: readonly Answer[]): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(fc.constant(n), callsArb(n, answers))),
      async ([n, calls]) => {
        expect(await runPath(variant, n, calls)).toEqual(model(n, calls));
      },
    ),
    { numRuns: 200 },
  );
}

describe('every gate path admits and releases as the gate protocol says', () => {
  const variants: Variant[] = [];
  for (const path of [
    'execute',
    'tryExecute',
    'executeSync',
    'executeGeneral',
    'tryExecuteGeneral',
  ] as const) {
    for (const timed of [false, true]) variants.push({ path, timed, waits: false });
  }

  it.each(variants)('$path (timed: $timed), gates that admit or refuse', (variant) =>
    matchesModel(variant, immediate),
  );

  it.each([
    { path: 'execute', timed: false, waits: true },
    { path: 'tryExecute', timed: true, waits: true },
  ] as const)('$path (timed: $timed), gates that also make calls wait', (variant) =>
    matchesModel(variant, [...immediate, 'waitAdmit', 'waitRefuse']),
  );

  it('an inner refusal that reached the dependency counts as a failure for the gates outside it, on the gates-only path too', async () => {
    const log: string[] = [];
    const outer = new ScriptedGate('g0', log, false, undefined);
    const inner = new ScriptedGate('g1', log, false, undefined);
    const p = pipeline(outer, inner);
    outer.script('admit');
    inner.script('refuseReached');
    const result = await p.tryExecute(() => 'ok');
    expect(result).toMatchObject({ ok: false, rejected: true });
    expect(log).toEqual([`g0#1:${Outcome.Failure}`]);
  });
});
