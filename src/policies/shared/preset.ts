import type { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';

/**
 * @internal The one way a policy is built from options already resolved and validated (a
 * registry builds every keyed instance of a name from one options object): the constructor
 * takes its public options, so the resolved ones are handed over here, in one reused record,
 * and the constructor takes them with {@link takePreset} before anything else. Nothing is
 * allocated per instance for the hand-over.
 */
const handedOver = {
  options: undefined as object | undefined,
  name: '',
  latency: undefined as LatencyHistogram | undefined,
};

/** @internal `new Policy()` on `options`, under `name`, recording latency into `latency`. */
export function buildFromResolved<T>(
  Policy: new () => T,
  options: object,
  name: string,
  latency?: LatencyHistogram,
): T {
  handedOver.options = options;
  handedOver.name = name;
  handedOver.latency = latency;
  try {
    return new Policy();
  } finally {
    handedOver.options = undefined;
    handedOver.latency = undefined;
  }
}

/** @internal The resolved options {@link buildFromResolved} hands to the constructor running now, taken once. */
export function takePreset<R extends object>(): R | undefined {
  const options = handedOver.options as R | undefined;
  // Cleared at once, so a policy built inside this constructor resolves its own options.
  handedOver.options = undefined;
  return options;
}

/** @internal The name handed over with the options {@link takePreset} returned. */
export function presetName(): string {
  return handedOver.name;
}

/** @internal The shared latency histogram handed over with those options, if any. */
export function presetLatency(): LatencyHistogram | undefined {
  return handedOver.latency;
}
