import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../../src/platform/net/public-address.js';

// Issue 13 item 5a: the SSRF rule of the media check, pure.
describe('isPublicAddress', () => {
  it('accepts public unicast addresses', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('refuses loopback, private, link-local, metadata, shared, reserved and special addresses', () => {
    for (const ip of [
      '127.0.0.1', '127.255.255.254', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
      '100.64.0.1', '192.0.0.1', '192.0.2.5', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250',
      '240.0.0.1', '255.255.255.255', '::', '::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::127.0.0.1', '64:ff9b::a00:1',
      '2002:7f00:1::', '2001:0:4136:e378::1', '2001:db8::1', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fec0::1', 'ff02::1',
    ]) expect(isPublicAddress(ip), ip).toBe(false);
  });

  it('refuses what is not an address', () => {
    for (const v of ['', 'localhost', 'example.org', '999.1.1.1', '1.2.3']) expect(isPublicAddress(v), v).toBe(false);
  });
});
