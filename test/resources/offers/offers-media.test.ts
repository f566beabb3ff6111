import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { probeImage } from '../../../src/platform/net/image-probe.js';
import { edition } from './helpers.js';
import { startImageServer, type ImageServer } from './image-server.js';

// Issue 13 item 5a (spec 2.3, 8): each `media` image at most 3000 x 3000 pixels, read from the image's header
// with a bounded, SSRF-safe fetch; a URL that cannot be checked is 422 with a clear message. The local image
// server is reached because the operator allowlist names 127.0.0.1 (MEDIA_FETCH_ALLOW_HOSTS).
let img: ImageServer;
let ed: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  img = await startImageServer();
  ed = await edition(t);
});
afterAll(async () => {
  delete process.env.MEDIA_FETCH_ALLOW_HOSTS;
  await img.close();
});
beforeEach(() => {
  process.env.MEDIA_FETCH_ALLOW_HOSTS = '127.0.0.1';
});

const post = (media: string[]) => t.post('/offers', { name: 'Mit Bild', edition: ed.uuid, media });

describe('offer media images', () => {
  it('accepts images up to 3000 x 3000 pixels (PNG and JPEG)', async () => {
    const res = await post([`${img.base}/ok.png`, `${img.base}/ok.jpg`, `${img.base}/max.png`]);
    expect(res.status, res.text).toBe(201);
    expect(res.body.media).toEqual([`${img.base}/ok.png`, `${img.base}/ok.jpg`, `${img.base}/max.png`]);
  });

  it('refuses a larger image with 422 naming its size, on create and on PATCH', async () => {
    const res = await post([`${img.base}/ok.png`, `${img.base}/wide.png`]);
    const p = expectProblem(res, 422);
    expect(p.type).toBe(`/validation_errors/${RULE_CODES.imageTooLarge}`);
    expect(p.violations).toEqual([{
      propertyPath: 'media[1]', code: RULE_CODES.imageTooLarge,
      message: 'The image is 4000 x 10 pixels; at most 3000 x 3000 pixels are allowed.',
    }]);
    const o = (await post([`${img.base}/ok.png`])).body;
    const q = expectProblem(await t.patch(`/offers/${o.uuid}`, { media: [`${img.base}/ok.png`, `${img.base}/tall.jpg`] }), 422);
    expect(q.violations?.[0]).toMatchObject({ propertyPath: 'media[1]', message: 'The image is 10 x 3001 pixels; at most 3000 x 3000 pixels are allowed.' });
    expect((await t.get(`/offers/${o.uuid}`)).body.media).toEqual([`${img.base}/ok.png`]);
  });

  it('does not fetch images the offer already has', async () => {
    const o = (await post([`${img.base}/ok.png`])).body;
    const before = img.hits();
    const res = await t.patch(`/offers/${o.uuid}`, { media: [`${img.base}/ok.png`], fee: 100 });
    expect(res.status, res.text).toBe(200);
    expect(img.hits()).toBe(before);
  });

  it('answers 422 with a clear message for what cannot be checked', async () => {
    const cases: [string, RegExp][] = [
      [`${img.base}/redirect`, /redirect \(302\), which is not followed/],
      [`${img.base}/missing.png`, /its server answered 404/],
      [`${img.base}/text`, /not an image whose size could be read/],
      ['http://images.example.org/a.png', /only https URLs are accepted/],
      ['https://nothing-here.invalid/a.png', /host name could not be resolved/],
    ];
    for (const [url, message] of cases) {
      const p = expectProblem(await post([url]), 422);
      expect(p.type, url).toBe(`/validation_errors/${RULE_CODES.imageUnverifiable}`);
      expect(p.violations?.[0].propertyPath).toBe('media[0]');
      expect(p.violations?.[0].message, url).toMatch(/^The image could not be checked: /);
      expect(p.violations?.[0].message, url).toMatch(message);
    }
  });

  it('refuses private, loopback and link-local addresses without the operator allowlist (SSRF)', async () => {
    delete process.env.MEDIA_FETCH_ALLOW_HOSTS;
    const before = img.hits();
    for (const url of [`https://127.0.0.1:${img.port}/ok.png`, 'https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/a.png', 'https://[::1]/a.png', 'https://localhost/a.png', `${img.base}/ok.png`]) {
      const p = expectProblem(await post([url]), 422);
      expect(p.violations?.[0].message, url).toMatch(/private, loopback or link-local address|only https URLs/);
    }
    expect(img.hits()).toBe(before);
    expect(await probeImage(`https://127.0.0.1:${img.port}/ok.png`, { allow: new Set() })).toEqual({
      ok: false, reason: 'its host resolves to a private, loopback or link-local address',
    });
  });

  it('reads only a bounded amount', async () => {
    expect(await probeImage(`${img.base}/ok.png`, { allow: new Set(['127.0.0.1']) })).toMatchObject({ ok: true, width: 300, height: 200 });
    expect(await probeImage(`${img.base}/text`, { allow: new Set(['127.0.0.1']), maxBytes: 4 })).toEqual({ ok: false, reason: 'no image size was found in its first 4 bytes' });
  });
});
