import { describe, expect, it } from 'vitest';
import { clientKey } from '../../../src/http/index.js';

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1234:56ab::1', '2001:db8:1234:5600::/56'],
    ['2001:db8:1234:56ff:aaaa:bbbb:cccc:dddd', '2001:db8:1234:5600::/56'],
    ['2001:0db8:0000:0001::', '2001:db8:0:0::/56'],
    ['::1', '0:0:0:0::/56'],
    ['fe80::1%eth0', 'fe80:0:0:0::/56'],
    ['not:an:address', 'not:an:address'],
    ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8:9'],
    [undefined, undefined],
  ])('keys %s as %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });

  it('gives every address of one /56 the same key, and the next /56 another', () => {
    expect(clientKey('2001:db8:1:200::1')).toBe(clientKey('2001:db8:1:2ff:ffff::9'));
    expect(clientKey('2001:db8:1:300::1')).not.toBe(clientKey('2001:db8:1:200::1'));
  });
});
