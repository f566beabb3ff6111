import { BlockList, isIP } from 'node:net';

// Which IP addresses an outgoing request on behalf of a client may reach (SSRF protection, issue 13): only
// public unicast addresses. Refused: unspecified, loopback, private (RFC 1918, unique local), shared
// (CGNAT), link-local (cloud metadata 169.254.169.254, fe80::/10), documentation and benchmarking ranges,
// multicast, reserved and broadcast, and IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo)
// or are otherwise special. Pure: no DNS here; callers resolve first and check every address.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64],
  ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** `::`, `::1`, and IPv4-compatible or -mapped IPv6 (`::a.b.c.d`, `::ffff:a.b.c.d`), in any spelling. */
function embedsIpv4OrUnspecified(v6: string): boolean {
  let canonical: string;
  try {
    canonical = new URL(`http://[${v6}]/`).hostname.slice(1, -1);
  } catch {
    return true;
  }
  return /^::(ffff:)?([0-9a-f]{1,4}:)?[0-9a-f]{0,4}$/.test(canonical);
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6 && embedsIpv4OrUnspecified(address)) return false;
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
