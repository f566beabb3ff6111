import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type Target } from '../net/outgoing.js';

// One webhook attempt over HTTP (issue 14): a POST of the signed body to the checked address (outgoing.ts),
// bounded: 5 s in all (connect, answer and what is read of its body), at most 64 KiB of the answer's body read
// (the rest is not waited for: the connection is closed), no redirect followed (a 3xx is a failed attempt).
// Connections are kept alive per origin; a kept socket was opened to an address checked for that host.
export const DELIVERY_TIMEOUT_MS = 5000;
export const MAX_RESPONSE_BYTES = 64 * 1024;

export type AttemptOutcome = { ok: boolean; status: number | null; latencyMs: number; error: string | null };

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 4, timeout: 30_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 4, timeout: 30_000 }),
};

/** Why an attempt failed, in words that say nothing of the receiver's answer body. */
function networkError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs / 1000} seconds`;
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable';
    case 'CERT_HAS_EXPIRED': case 'DEPTH_ZERO_SELF_SIGNED_CERT': case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE': case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate not accepted (${code})`;
    default: return code ? `connection failed (${code})` : 'connection failed';
  }
}

export function postSigned(target: Target, body: string, headers: Record<string, string>, opts: { timeoutMs?: number; maxBytes?: number } = {}): Promise<AttemptOutcome> {
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_RESPONSE_BYTES;
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const secure = target.url.protocol === 'https:';
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (ok: boolean, status: number | null, error: string | null, destroy = false) => {
      if (settled) return;
      settled = true;
      if (destroy) req.destroy();
      resolve({ ok, status, latencyMs: Math.round(performance.now() - started), error });
    };
    const req = (secure ? https : http).request(target.url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: pinnedLookup(target),
      signal,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'holiday-programme-api (webhooks)',
        'accept-encoding': 'identity',
      },
    }, (res) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const error = ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`;
      let read = 0;
      res.on('data', (c: Buffer) => {
        read += c.length;
        // The answer's body is not used; beyond the limit it is not read at all.
        if (read > maxBytes) finish(ok, status, error, true);
      });
      res.on('end', () => finish(ok, status, error));
      res.on('error', (err) => finish(false, status, networkError(err, signal.aborted, timeoutMs)));
    });
    req.on('error', (err) => finish(false, null, networkError(err, signal.aborted, timeoutMs)));
    req.end(body);
  });
}
