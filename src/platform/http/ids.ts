import bs58 from 'bs58';
import { randomUUID } from 'node:crypto';

// Spec 1.4: every record has an RFC 4122 UUID; the admin's URLs carry a 22-character base58 form of it.
// bs58 is not fixed width (about 3% of UUIDs encode shorter), so we left-pad with the zero digit '1'.
const BASE58_LENGTH = 22;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]{22}$/;

export function newUuid(): string {
  return randomUUID();
}

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

export function uuidToBase58(uuid: string): string {
  const bytes = Buffer.from(uuid.replace(/-/g, ''), 'hex');
  return bs58.encode(bytes).padStart(BASE58_LENGTH, '1');
}

export function base58ToUuid(value: string): string | null {
  if (!BASE58_RE.test(value)) return null;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    return null;
  }
  // Leading '1' digits decode to leading zero bytes; keep the last 16.
  if (bytes.length > 16) {
    const extra = bytes.subarray(0, bytes.length - 16);
    if (extra.some((b) => b !== 0)) return null;
    bytes = bytes.subarray(bytes.length - 16);
  }
  if (bytes.length < 16) {
    const padded = new Uint8Array(16);
    padded.set(bytes, 16 - bytes.length);
    bytes = padded;
  }
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Reads an identifier in either accepted form; returns the lower-case RFC 4122 form or null. */
export function parseId(value: string): string | null {
  if (isUuid(value)) return value.toLowerCase();
  return base58ToUuid(value);
}
