/**
 * The rate limit key of a client address: an IPv4 address as it is, an IPv6 address grouped by
 * its /56 prefix (`2001:db8:1234:5600::/56`), as express-rate-limit does: one subscriber is
 * usually given a whole /56 or /64, and keying on the full address would let it use 2^72 keys.
 * An IPv4-mapped IPv6 address (`::ffff:203.0.113.7`) is its IPv4 address. Anything else (no
 * address, a name) is returned as it is; undefined stays undefined.
 *
 * @example
 * ```ts
 * clientKey('2001:db8:1234:56ab::1'); // '2001:db8:1234:5600::/56'
 * clientKey('::ffff:203.0.113.7'); // '203.0.113.7'
 * ```
 */
export function clientKey(address: string | undefined): string | undefined {
  if (address === undefined || !address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1];
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  const prefix = [groups[0]!, groups[1]!, groups[2]!, groups[3]! & 0xff00];
  return `${prefix.map((g) => g.toString(16)).join(':')}::/56`;
}

/** The eight 16-bit groups of an IPv6 address (a zone index dropped), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  const bare = address.split('%')[0]!;
  const halves = bare.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1]!.split(':') : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4 forms other than the mapped one) counts as two groups.
  const last = tail.length > 0 ? tail : head;
  if (last.length > 0 && last[last.length - 1]!.includes('.')) last.splice(-1, 1, '0', '0');
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const groups = all.map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  return groups.some(Number.isNaN) ? undefined : groups;
}
