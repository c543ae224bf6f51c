/**
 * What a policy kind written outside the library is made of: the kind descriptor protocol
 * (`PolicyKindDescriptor`, `defineKind`, config schemas, metrics declared from its stats), the
 * step protocol its engine implements (`Gate`, `WaitingGate`, `AnsweringGate`) and the
 * `WaitLine` a waiting gate keeps its calls in. An application that only uses kinds imports
 * nothing from here.
 * @packageDocumentation
 */

export { defineKind, type KindDefinition } from '../protocol/defineKind.js';
export {
  type AnyPolicyKind,
  type ConfigField,
  type ConfigReference,
  type ConfigSchema,
  type ConfigVariants,
  configSchema,
  type DashboardRow,
  type InstanceHealth,
  type InstanceView,
  type KeyedGroup,
  type KeyedInstancesView,
  type KeyedKind,
  type KindChannel,
  type KindConfig,
  type KindConfigTypes,
  type KindHooks,
  type KindMetrics,
  type KindSpanEvent,
  type MissingOption,
  type MissingOptionContext,
  type OptionsData,
  POLICY_KIND,
  type PolicyKindDescriptor,
  type PolicyKindOf,
} from '../protocol/kind.js';
export * from '../protocol/step.js';
export { WaitLine, type WaitLineOptions } from '../protocol/WaitLine.js';
export {
  type CountsCombine,
  counter,
  type DeclaredMetrics,
  declareMetrics,
  gauge,
  type MetricCounts,
  type MetricReading,
  type MetricsDeclaration,
} from '../telemetry/declareMetrics.js';
export { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
export type {
  FamilyType,
  InstrumentKind,
  MetricFamilyDescriptor,
  SeriesLabels,
  SeriesSink,
} from '../telemetry/metricFamily.js';
