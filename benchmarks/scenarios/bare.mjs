/** The floor: calling the target with no library at all. */
import { bareAsync, bareSync } from '../lib/rows.mjs';

export const title = 'Bare call';
export const order = 0;

export function rows() {
  return [bareAsync(), bareSync()];
}
