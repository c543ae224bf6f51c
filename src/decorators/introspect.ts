import { UsageError } from '../errors/OptionsError.js';
import type { Pipeline } from '../pipeline/Pipeline.js';
import { planOf } from './plan.js';

/**
 * The pipeline that calls of `target[method]` go through, built if it was not yet: for a
 * decorated method, its policies (outermost first) are `pipelineOf(obj, 'm').policies`, e.g. to
 * listen to the events of a policy made from options. `target` is the object (or the class,
 * for a static method); with `perInstance` policies each object has its own pipeline.
 * Throws a `UsageError` for a method that is not decorated, or whose policies are per key.
 */
export function pipelineOf(target: object, method: PropertyKey): Pipeline {
  const plan = planOf((target as Record<PropertyKey, unknown>)[method]);
  if (plan === undefined) {
    throw new UsageError(`\`${String(method)}\` is not a method with breakwater decorators`);
  }
  if (plan.keyed) {
    throw new UsageError(
      `\`${String(method)}\` has per-key policies: each key has its own pipeline (get the instances from the registry)`,
    );
  }
  return plan.binding(target).entry!.pipeline;
}
