import { BlockList, isIP } from 'node:net';
import type { Request } from 'express';
import type { TrustProxy } from '../config.js';

// Forwarding headers behind a reverse proxy (D1, D12; `TRUST_PROXY`). A proxy appends to `X-Forwarded-For`
// the address it received the request from, so only entries added by our own proxies can be believed: the
// chain is read from the right (the socket's peer first), and the client is the first address that is not a
// trusted proxy; everything left of it was written by the client itself. `X-Forwarded-Host` is read the same
// way: the entry of the outermost trusted proxy, never one the client put in front of it.

/** Whether the hop-th address from the right (0: the socket's peer) is one of our proxies. */
export type TrustFunction = (address: string, hop: number) => boolean;

const unmapped = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address);

/** The trust rule of a TRUST_PROXY setting (`true`, from tests and older callers, is one hop as in D12). */
export function trustFunction(trust: TrustProxy | boolean): TrustFunction {
  if (trust === false) return () => false;
  const setting = trust === true ? { hops: 1 } : trust;
  if ('hops' in setting) return (_address, hop) => hop < setting.hops;
  const list = new BlockList();
  for (const entry of setting.addresses) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (address) => {
    const a = unmapped(address.trim());
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** How many hops from the right (the socket's peer first) are trusted proxies. */
export function trustedHops(req: Request, trust: TrustFunction): number {
  const forwardedFor = String(req.headers['x-forwarded-for'] ?? '').split(',').map((a) => a.trim()).filter(Boolean).reverse();
  const chain = [req.socket.remoteAddress ?? '', ...forwardedFor];
  let hops = 0;
  while (hops < chain.length && trust(chain[hops]!, hops)) hops++;
  return hops;
}

/**
 * The host the client asked our outermost trusted proxy for: the `X-Forwarded-Host` entry that proxy wrote
 * (proxies that replace the header leave one entry, which is then theirs); undefined when the request did not
 * come through a trusted proxy or carries no such header.
 */
export function forwardedHost(req: Request, trust: TrustFunction): string | undefined {
  const header = req.headers['x-forwarded-host'];
  const hosts = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map((h) => h.trim()).filter(Boolean);
  if (hosts.length === 0) return undefined;
  const hops = trustedHops(req, trust);
  if (hops === 0) return undefined;
  return hosts[Math.max(0, hosts.length - hops)];
}
