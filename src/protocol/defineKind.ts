import type { InstanceView, PolicyKindDescriptor } from './kind.js';

/** What the defaults of {@link defineKind} ask of a policy. */
interface DefaultPolicy<R> {
  checkOptions(options: R): void;
  applyOptions(options: R): void;
  dispose(): void;
  stats(): object;
}

/** The parts of a descriptor {@link defineKind} fills in when they are left out. */
type Defaulted = 'is' | 'create' | 'reconfigure' | 'dispose' | 'view';

/**
 * A policy kind as {@link defineKind} takes it: a {@link PolicyKindDescriptor} with its policy
 * class, whose defaults stand in for the parts left out.
 */
export type KindDefinition<P extends object, R, C> = Omit<
  PolicyKindDescriptor<P, R, C>,
  Defaulted
> &
  Partial<Pick<PolicyKindDescriptor<P, R, C>, Defaulted>> & {
    /** The policy class: instances are made with `new` from their options. */
    readonly policy: new (
      options: never,
    ) => P;
  };

/**
 * A policy kind's descriptor with defaults for what most kinds say alike: `is` is
 * `instanceof` the policy class, `create` calls `new` with the options, `reconfigure` calls
 * the policy's `checkOptions` then returns what calls its `applyOptions`, `dispose` calls its
 * `dispose`, and `view` shows its `stats()`. Give any of them to do otherwise.
 *
 * @example
 * ```ts
 * export const quotaKind = defineKind<Quota, ResolvedQuotaOptions, QuotaCounts>({
 *   name: 'quota', label: 'quota', section: 'quotas', policy: Quota,
 *   resolve: resolveQuotaOptions, config: { schema: quotaSchema }, metrics: quotaMetrics,
 * });
 * ```
 */
export function defineKind<P extends object, R, C = unknown>(
  definition: KindDefinition<P, R, C>,
): PolicyKindDescriptor<P, R, C> {
  const { policy: Policy, ...descriptor } = definition;
  const own = (p: P) => p as unknown as DefaultPolicy<R>;
  return {
    is: (value): value is P => value instanceof Policy,
    create: (options) => new Policy(options as never),
    reconfigure(p, options) {
      own(p).checkOptions(options);
      return () => own(p).applyOptions(options);
    },
    dispose: (p) => own(p).dispose(),
    view: (p): InstanceView => ({ stats: own(p).stats() }),
    ...descriptor,
  };
}
