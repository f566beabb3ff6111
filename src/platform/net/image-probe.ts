import http from 'node:http';
import https from 'node:https';
import { imageSize } from 'image-size';
import { readConfig } from '../config.js';
import { pinnedLookup, resolveTarget } from './outgoing.js';

// Reads the pixel size of an image behind a URL a client sent (issue 13: offer `media`, at most 3000 x 3000),
// bounded and safe against server-side request forgery:
// - https only, the host resolved once, every address public, the connection pinned to the checked address
//   (outgoing.ts);
// - no redirects (a 3xx is an answer that cannot be checked), one GET, status 200 only;
// - at most `MAX_BYTES` read and `TIMEOUT_MS` in all; reading stops as soon as the header gave the size;
// - the size is read by the `image-size` library (PNG, JPEG, GIF, WebP, AVIF, SVG, …) from what arrived.
// An operator may allow hosts for local use and tests: `MEDIA_FETCH_ALLOW_HOSTS` (comma-separated host
// names, e.g. `127.0.0.1`) may be reached over http too, and at any address.
export const MAX_BYTES = 1024 * 1024;
export const TIMEOUT_MS = 5000;

export type ImageProbe = { ok: true; width: number; height: number; type?: string } | { ok: false; reason: string };

/** Hosts the operator allowed (read at every call, so a change of the environment applies at once). */
export function allowedHosts(env?: NodeJS.ProcessEnv): Set<string> {
  return readConfig(env).mediaFetchAllowHosts;
}

export async function probeImage(url: string, opts: { timeoutMs?: number; maxBytes?: number; allow?: Set<string> } = {}): Promise<ImageProbe> {
  const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_BYTES;
  const signal = AbortSignal.timeout(timeoutMs);
  const checked = await resolveTarget(url, opts.allow ?? allowedHosts(), timeoutMs);
  if (!checked.ok) return checked;
  const u = checked.target.url;
  const pinned = pinnedLookup(checked.target);

  return new Promise<ImageProbe>((resolve) => {
    let settled = false;
    const finish = (r: ImageProbe) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(r);
    };
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, {
      method: 'GET',
      agent: false,
      lookup: pinned,
      signal,
      headers: { accept: 'image/*', 'user-agent': 'holiday-programme-api (media check)', 'accept-encoding': 'identity' },
    }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) return finish({ ok: false, reason: `its server answered with a redirect (${status}), which is not followed` });
      if (status !== 200) return finish({ ok: false, reason: `its server answered ${status}` });
      const chunks: Buffer[] = [];
      let size = 0;
      const attempt = (): ImageProbe | null => {
        try {
          // A fresh, exact-size copy: image-size must not read past what arrived (pooled Buffers share memory).
          const d = imageSize(new Uint8Array(Buffer.concat(chunks, size)));
          if (d.width && d.height) return { ok: true, width: d.width, height: d.height, type: d.type };
        } catch {
          // not enough yet, or not an image
        }
        return null;
      };
      res.on('data', (c: Buffer) => {
        if (settled) return;
        const room = maxBytes - size;
        chunks.push(room < c.length ? c.subarray(0, room) : c);
        size += Math.min(room, c.length);
        const found = attempt();
        if (found) return finish(found);
        if (size >= maxBytes) finish({ ok: false, reason: `no image size was found in its first ${maxBytes} bytes` });
      });
      res.on('end', () => finish(attempt() ?? { ok: false, reason: 'it is not an image whose size could be read' }));
      res.on('error', () => finish({ ok: false, reason: signal.aborted ? `its server did not answer within ${timeoutMs / 1000} seconds` : 'the connection failed' }));
    });
    req.on('error', () => finish({ ok: false, reason: signal.aborted ? `its server did not answer within ${timeoutMs / 1000} seconds` : 'its server could not be reached' }));
    req.end();
  });
}
