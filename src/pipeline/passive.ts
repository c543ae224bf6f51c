import type { Pipeline } from './Pipeline.js';

/** @internal What a pipeline that leaves passive steps out of its plan answers to. */
export type Replanning = Pick<Pipeline, 'plan' | 'syncDepth'>;

/**
 * @internal A step that may pass every call untouched for a while (a chaos step switched off).
 * A pipeline asks it, each time it plans its calls, whether it is passive now, and leaves it out
 * of the plan if so, so it costs their calls nothing; the step notes the pipeline and has it plan
 * again when that changes. It holds the pipelines weakly: one dropped by its owner is not kept
 * alive by its steps.
 */
export interface PassiveStep {
  passive(pipeline: Replanning): boolean;
}

/**
 * @internal The pipelines watching one passive step, held weakly; the dead ones are dropped
 * whenever the list doubles, so it stays within twice the live ones.
 */
export class PassiveWatchers {
  private refs: WeakRef<Replanning>[] = [];
  private readonly known = new WeakSet<Replanning>();
  private prunedAt = 8;

  /** Notes `pipeline`, once however often it plans. */
  add(pipeline: Replanning): void {
    if (this.known.has(pipeline)) return;
    this.known.add(pipeline);
    this.refs.push(new WeakRef(pipeline));
    if (this.refs.length >= this.prunedAt) {
      this.refs = this.refs.filter((r) => r.deref() !== undefined);
      this.prunedAt = Math.max(8, this.refs.length * 2);
    }
  }

  /** Tells every live pipeline to plan again (after an `executeSync` in progress ends). */
  notify(): void {
    for (const r of this.refs) {
      const p = r.deref();
      if (p !== undefined) replan(p);
    }
  }
}

function replan(p: Replanning): void {
  if (p.syncDepth > 0) queueMicrotask(() => replan(p));
  else p.plan();
}
