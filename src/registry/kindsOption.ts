import { OptionsError } from '../errors/OptionsError.js';
import type { AnyPolicyKind } from '../protocol/kind.js';

const NAME = /^[A-Za-z][A-Za-z0-9]*$/;
const RESERVED = new Set(['defaults', 'keys']);

/**
 * @internal The `kinds` option of a registry: descriptors whose names and sections are
 * identifiers that no other kind (the library's, `taken`, or one before it) and no top-level
 * config key uses.
 */
export function checkKinds(value: unknown, taken: readonly AnyPolicyKind[]): AnyPolicyKind[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new OptionsError('kinds', value, 'an array of policy kinds');
  const names = new Set<string>(RESERVED);
  for (const k of taken) names.add(k.name).add(k.section);
  return value.map((kind: unknown, i) => {
    const at = `kinds[${i}]`;
    if (typeof kind !== 'object' || kind === null) {
      throw new OptionsError(at, kind, 'a policy kind (a PolicyKindDescriptor)');
    }
    const k = kind as Partial<AnyPolicyKind>;
    for (const field of ['is', 'create', 'resolve', 'reconfigure', 'dispose', 'view'] as const) {
      if (typeof k[field] !== 'function')
        throw new OptionsError(`${at}.${field}`, k[field], 'a function');
    }
    if (typeof k.label !== 'string' || k.label === '') {
      throw new OptionsError(`${at}.label`, k.label, 'a non-empty string');
    }
    if (typeof k.config !== 'object' || k.config === null || !(k.config.schema instanceof Map)) {
      throw new OptionsError(`${at}.config.schema`, k.config?.schema, 'a Map of option names');
    }
    for (const field of ['name', 'section'] as const) {
      const v = k[field];
      if (typeof v !== 'string' || !NAME.test(v)) {
        throw new OptionsError(`${at}.${field}`, v, 'an identifier (letters and digits)');
      }
      if (names.has(v)) {
        throw new OptionsError(`${at}.${field}`, v, 'a name no other kind or config key uses');
      }
      names.add(v);
    }
    return kind as AnyPolicyKind;
  });
}
