import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { isOwnCopy, otherCopyNote } from '../protocol/brand.js';
import { type AnsweringGate, type Gate, StepKind, type WaitingGate } from '../protocol/step.js';
import { NO_SLOT, type PipelineCore, type Step } from './Execution.js';
import type { HedgeRace } from './HedgeRace.js';
import { isKeyedStep } from './keyedMark.js';
import { LatencySampler } from './LatencySampler.js';

/**
 * Calls with a deadline timed for a gate that compares deadlines with durations, one in this
 * many: a duration costs a second clock reading, and a few a second keep an estimate current.
 */
const BOUNDED_EVERY = 4;

/**
 * @internal How a pipeline runs its calls, decided once from its steps when it is built: what
 * the executor knows of them, and which of the lighter paths of `Pipeline` apply.
 */
export interface PipelinePlan {
  readonly core: PipelineCore;
  /** The gates, outermost first. */
  readonly gates: readonly Gate[];
  /** Only gates that never wait or time calls: the allocation-light path applies. */
  readonly gatesOnly: boolean;
  /** The gate of a gates-only pipeline of one gate that times no call, else undefined. */
  readonly soleGate: Gate | undefined;
  /** Only gates that never wait, and fallbacks: `executeSync` is allowed. */
  readonly syncCapable: boolean;
}

/**
 * @internal The plan of a pipeline of `steps`, outermost first. A hedge makes the steps inside
 * it a pipeline of their own ({@link PipelineCore.inner}), which runs each of its attempts; a
 * coalescing step does the same, and runs it once per flight.
 */
export function planPipeline(steps: readonly Step[]): PipelinePlan {
  const { core, waits } = buildCore(steps);
  // All gates (the common case, a pipeline per key among them): the steps' array serves.
  const gates = steps.every((s) => s.stepKind === StepKind.Gate)
    ? (steps as readonly Gate[])
    : steps.filter((s): s is Gate => s.stepKind === StepKind.Gate);
  const gatesOnly = gates.length === steps.length && !core.needsStartTime && !waits;
  return {
    core,
    gates,
    gatesOnly,
    soleGate: gatesOnly && gates.length === 1 && core.sampler === undefined ? gates[0] : undefined,
    syncCapable: steps.every(
      (s) => s.stepKind === StepKind.Fallback || (s.stepKind === StepKind.Gate && !s.mayWait),
    ),
  };
}

/** @internal Throws {@link OptionsError} for the first of `policies` that is not a policy. */
export function checkPolicies(policies: readonly unknown[]): void {
  policies.forEach((p, i) => {
    if (isKeyedStep(p)) {
      throw new UsageError(
        `policies[${i}] is a keyed step (${p.kind} "${p.name}"), which only a pipeline built with \`pipeline(...)\` can hold: it finds the step's instance for each call`,
      );
    }
    if (!isPolicy(p)) {
      throw new OptionsError(`policies[${i}]`, p, `a breakwater policy${otherCopyNote(p)}`);
    }
  });
}

/**
 * What the executor knows of a pipeline's steps, decided once when it is built:
 * which times every call reads, whether a call may wait, settle early or need a signal of its
 * own, and each step's slots in the execution record. `waits`: some step may make a call wait.
 */
function buildCore(all: readonly Step[], parent = -1): { core: PipelineCore; waits: boolean } {
  // The steps inside a hedge run once per attempt, and those inside a coalescing step once per
  // flight, as a pipeline of their own; `parent` is the kind of the step that runs them.
  const h = all.findIndex((s) => s.stepKind === StepKind.Coalesce || s.needs().concurrentAttempts);
  const hedged = h >= 0 && all[h]!.stepKind !== StepKind.Coalesce;
  const inner = h < 0 ? undefined : buildCore(all.slice(h + 1), all[h]!.stepKind).core;
  const steps = h < 0 ? all : all.slice(0, h + 1);
  let needsStartTime = false;
  let needsEndTime = false;
  let deferred = false;
  let deferredWhenUnheard = false;
  let ownSignal = false;
  let waits = false;
  let sampleEvery = Number.POSITIVE_INFINITY;
  let boundedLatency = false;
  // Timeouts before the last gate that reads the call's deadline note it for that gate.
  // A flight is shared by calls with deadlines of their own: none of them bounds it.
  let boundsGates =
    hedged && all.slice(h + 1).some((s) => s.needs().deadline === true) ? steps.length : 0;
  let clock: Clock = systemClock;
  for (const s of steps) {
    // A gate from outside may declare a `clock` property left undefined.
    const own = 'clock' in s ? (s.clock as Clock | undefined) : undefined;
    if (own !== undefined && own !== systemClock && clock === systemClock) clock = own;
    if (s.stepKind === StepKind.Gate && s.latencyEvery !== 0) {
      sampleEvery = Math.min(sampleEvery, s.latencyEvery);
    }
    const needs = s.needs();
    if (needs.deadline === true) boundsGates = steps.indexOf(s) + 1;
    boundedLatency ||= needs.boundedLatency === true;
    needsStartTime ||= needs.startTime;
    needsEndTime ||= needs.endTime;
    waits ||= needs.mayWait;
    ownSignal ||= needs.ownSignal;
    deferred ||= needs.settlesEarly;
    deferredWhenUnheard ||= needs.settlesWhenUnheard;
  }
  const boundsRetries = Math.max(
    0,
    steps.findIndex((s) => s.stepKind === StepKind.Retry || s.stepKind === StepKind.Hedge),
  );
  // Every call is timed when the clock is cheap to read (a manual clock in tests).
  if (clock.cheapNow === true && sampleEvery !== Number.POSITIVE_INFINITY) sampleEvery = 1;
  const sampler =
    needsEndTime || sampleEvery === Number.POSITIVE_INFINITY
      ? undefined
      : new LatencySampler(sampleEvery);
  const boundedSampler =
    boundedLatency && !needsEndTime
      ? new LatencySampler(clock.cheapNow === true ? 1 : BOUNDED_EVERY)
      : undefined;
  const core: PipelineCore = {
    steps,
    kinds: kindsOf(steps),
    clock,
    needsStartTime,
    needsEndTime,
    sampler,
    boundedSampler,
    pool: [],
    ...assignSlots(steps, needsEndTime || sampler !== undefined || boundedSampler !== undefined),
    deferred,
    deferredWhenUnheard: deferredWhenUnheard && !deferred,
    // An attempt of a hedge may be cancelled when another wins, and a flight when its every
    // caller left: either needs a signal of its own.
    ownSignal: ownSignal || parent >= 0,
    listensToCaller: waits || ownSignal || deferred,
    boundsRetries,
    boundsInner: Math.max(boundsRetries, boundsGates),
    inner,
    takesKey: (h >= 0 && !hedged) || inner?.takesKey === true,
    races: hedged ? [] : NO_RACES,
    timeoutsBound: parent === StepKind.Hedge || steps.some((s) => s.stepKind === StepKind.Timeout),
  };
  return { core, waits };
}

/** The steps' kinds; `Uint8Array.from` with a mapping function costs several times more. */
function kindsOf(steps: readonly Step[]): Uint8Array {
  const kinds = new Uint8Array(steps.length);
  for (let i = 0; i < steps.length; i++) kinds[i] = steps[i]!.stepKind;
  return kinds;
}

/** Gives each step that keeps a per-call number its slot in the execution record. */
function assignSlots(
  steps: readonly Step[],
  timed: boolean,
): Pick<PipelineCore, 'slotOf' | 'timeSlotOf' | 'startedSlot' | 'slotCount'> {
  let next = 0;
  // Made by `map`, at their exact size: grown by `push`, each would hold room for 17.
  const slotOf = steps.map(() => NO_SLOT);
  const timeSlotOf = steps.map(() => NO_SLOT);
  steps.forEach((s, i) => {
    const needs = s.needs();
    if (needs.callSlot) slotOf[i] = next++;
    if (needs.timeSlot) timeSlotOf[i] = next++;
  });
  const startedSlot = timed ? next++ : NO_SLOT;
  return { slotOf, timeSlotOf, startedSlot, slotCount: next };
}

/** The races of every pipeline without a hedge: never pushed to, since no race is made. */
const NO_RACES: HedgeRace[] = [];

/**
 * @internal A step a pipeline can hold: a gate of any kind (known by the protocol it
 * implements, from any copy of the library or from outside it), or a retry, timeout, fallback,
 * hedge or coalescing step, which the executor runs itself.
 */
export function isPolicy(p: unknown): p is Step {
  // A policy of another version of the library speaks another protocol, whatever its shape.
  if (typeof p !== 'object' || p === null || otherCopyNote(p) !== '') return false;
  const step = p as Partial<Gate>;
  if (step.stepKind === StepKind.Gate) {
    return (
      typeof step.needs === 'function' &&
      typeof step.admit === 'function' &&
      typeof step.release === 'function' &&
      typeof step.releaseSuccess === 'function' &&
      typeof step.classifyError === 'function' &&
      typeof step.classifyResult === 'function' &&
      typeof step.rejection === 'function' &&
      typeof step.dispose === 'function' &&
      typeof step.needsDuration === 'boolean' &&
      typeof step.latencyEvery === 'number' &&
      typeof step.mayWait === 'boolean' &&
      (step.needs().mayAnswer !== true || typeof (p as AnsweringGate).answer === 'function') &&
      (!step.mayWait ||
        (typeof (p as WaitingGate).enqueue === 'function' &&
          typeof (p as WaitingGate).leave === 'function'))
    );
  }
  // The around-step protocol is not public yet: only the library's own steps speak it (their
  // kinds run from Retry to Coalesce).
  const kind = (p as { readonly stepKind?: unknown }).stepKind as number;
  return isOwnCopy(p) && kind >= StepKind.Retry && kind <= StepKind.Coalesce;
}
