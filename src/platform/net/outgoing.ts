import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from './public-address.js';

// Where a request on behalf of a client may go (SSRF, issues 13 and 14), shared by the image check of offers
// and the delivery of webhooks: https only; no credentials in the URL; the host name resolved once and EVERY
// address public (isPublicAddress: no loopback, private, link-local or cloud-metadata address); the
// connection then goes to the address that was checked (`pinnedLookup`), so a DNS answer that changes between
// the check and the connect (rebinding) cannot reach another address. TLS is still verified for the host name.
// Hosts the operator allows (an environment variable per use) may be reached over http and at any address, for
// local receivers and tests.

/** Comma-separated host names of an environment variable, read at every call (a change applies at once). */
export function allowedHostsOf(value: string | undefined): Set<string> {
  return new Set((value ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean));
}

export type Target = { url: URL; address: string; family: number; allowed: boolean };
export type TargetCheck = { ok: true; target: Target } | { ok: false; reason: string };

/** The URL's scheme and form, without DNS: whether it may be tried at all. */
export function checkUrlForm(raw: string, allow: Set<string>): { ok: true; url: URL; host: string; allowed: boolean } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'it is not a valid URL' };
  }
  const host = url.hostname.toLowerCase();
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  const allowed = allow.has(host) || allow.has(bare);
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) return { ok: false, reason: 'only https URLs are accepted' };
  if (url.username || url.password) return { ok: false, reason: 'URLs with credentials are not accepted' };
  return { ok: true, url, host: bare, allowed };
}

/** Resolves the URL's host once and checks every address; the first is the one to connect to. */
export async function resolveTarget(raw: string, allow: Set<string>, timeoutMs = 5000): Promise<TargetCheck> {
  const form = checkUrlForm(raw, allow);
  if (!form.ok) return form;
  const signal = AbortSignal.timeout(timeoutMs);
  let addresses: { address: string; family: number }[];
  try {
    addresses = await Promise.race([
      lookup(form.host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('timeout')))),
    ]);
  } catch {
    return { ok: false, reason: signal.aborted ? `its host did not resolve within ${timeoutMs / 1000} seconds` : 'its host name could not be resolved' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'its host name could not be resolved' };
  if (!form.allowed && !addresses.every((a) => isPublicAddress(a.address))) {
    return { ok: false, reason: 'its host resolves to a private, loopback or link-local address' };
  }
  return { ok: true, target: { url: form.url, address: addresses[0]!.address, family: addresses[0]!.family, allowed: form.allowed } };
}

/** A `lookup` for http(s).request that answers with the checked address only (no second resolution). */
export function pinnedLookup(target: Pick<Target, 'address' | 'family'>): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family);
  };
}
