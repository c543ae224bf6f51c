/**
 * @internal Where a policy built in code under a name is told about: the view of such policies
 * that registries listing them install (`registry/codeBuilt.ts`). A program that never loads
 * a registry pays a branch per named policy built, and nothing per call.
 */
type Sink = (kind: string, name: string, policy: object) => void;

let sink: Sink | undefined;

/**
 * @internal Tells the view of named policies built in code about `policy`, of kind `kind`
 * (`circuitBreaker`), built under an explicit `name`. Called once from its constructor.
 */
export function noteCodeBuilt(kind: string, name: string, policy: object): void {
  if (sink !== undefined) sink(kind, name, policy);
}

/** @internal Installs the view that {@link noteCodeBuilt} tells. */
export function setCodeBuiltSink(view: Sink): void {
  sink = view;
}
