import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readConfig, type Config } from '../config.js';

// Secrets at rest (issue 22; webhook signing secrets): sealed with AES-256-GCM under the operator's key
// (`SECRETS_KEY`). A sealed value names its key by a short fingerprint, so during a key rotation the previous
// key (`SECRETS_KEY_PREVIOUS`) still opens what it sealed while the new key seals everything new, and
// `cli secrets rotate` seals every stored secret again with the new key (docs/operations.md). Without a key the
// value is stored as it is (the start warns); a stored plain value is read as it is, so a key can be introduced
// later and `secrets rotate` seals what was stored before.
//
//   enc:v1:<key fingerprint, 8 hex>:<iv, base64url>:<tag, base64url>:<ciphertext, base64url>

const PREFIX = 'enc:v1:';

/** A sealed value whose key is not configured, or that was altered: never silently used as plain text. */
export class SecretUnreadable extends Error {
  override name = 'SecretUnreadable';
}

export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** Whether `stored` is sealed with the current key (nothing for `secrets rotate` to do). */
export function sealedWithCurrentKey(stored: string, config: Config = readConfig()): boolean {
  return !!config.secretsKey && stored.startsWith(`${PREFIX}${keyFingerprint(config.secretsKey)}:`);
}

/** The value to store: sealed with SECRETS_KEY, or as it is when no key is configured. */
export function sealSecret(plain: string, config: Config = readConfig()): string {
  const key = config.secretsKey;
  if (!key) return plain;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${PREFIX}${keyFingerprint(key)}:${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${data.toString('base64url')}`;
}

/** The secret of a stored value, opened with whichever configured key sealed it. */
export function openSecret(stored: string, config: Config = readConfig()): string {
  if (!isSealed(stored)) return stored;
  const [fingerprint, iv, tag, data] = stored.slice(PREFIX.length).split(':');
  const key = [config.secretsKey, ...config.secretsKeyPrevious].find((k) => k && keyFingerprint(k) === fingerprint);
  if (!key || !iv || !tag || data === undefined) {
    throw new SecretUnreadable(`a stored secret is sealed with key ${fingerprint ?? '?'}, which is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadable(`a stored secret sealed with key ${fingerprint} does not open (altered)`);
  }
}

/** The stored value sealed again with the current key; null when it already is. */
export function resealSecret(stored: string, config: Config = readConfig()): string | null {
  if (sealedWithCurrentKey(stored, config)) return null;
  return sealSecret(openSecret(stored, config), config);
}
