import { imageFits, MAX_IMAGE_PIXELS } from '../../domain/media.js';
import { invalid, violation, type Violation } from '../../domain/errors.js';
import { probeImage } from '../../platform/net/image-probe.js';

// Spec 2.3 and 8 (issue 13): every `media` image of an offer is at most 3000 x 3000 pixels. The server reads
// each new image's header (src/platform/net/image-probe.ts: https only, public addresses only, bounded in
// size and time, no redirects); an image too large, or one that cannot be checked, is 422 on `media[i]`.
// Images the offer already had are not fetched again.
const CONCURRENCY = 5;

export async function assertMediaImages(urls: readonly string[], alreadyStored: ReadonlySet<string> = new Set()): Promise<void> {
  const todo = urls.map((url, i) => ({ url, i })).filter((x) => !alreadyStored.has(x.url));
  const results = new Map<string, Awaited<ReturnType<typeof probeImage>>>();
  const distinct = [...new Set(todo.map((x) => x.url))];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, distinct.length) }, async () => {
    while (next < distinct.length) {
      const url = distinct[next++];
      results.set(url, await probeImage(url));
    }
  }));
  const violations: Violation[] = [];
  for (const { url, i } of todo) {
    const r = results.get(url)!;
    if (!r.ok) {
      violations.push(violation(`media[${i}]`, `The image could not be checked: ${r.reason}.`, 'imageUnverifiable'));
    } else if (!imageFits(r.width, r.height)) {
      violations.push(violation(`media[${i}]`, `The image is ${r.width} x ${r.height} pixels; at most ${MAX_IMAGE_PIXELS} x ${MAX_IMAGE_PIXELS} pixels are allowed.`, 'imageTooLarge'));
    }
  }
  if (violations.length > 0) throw invalid(violations);
}
