import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local image server for the media checks (issue 13): image headers of a chosen size, a redirect, a 404
// and a text file. Reached through MEDIA_FETCH_ALLOW_HOSTS=127.0.0.1 (http allowed for allowed hosts).
export function pngHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'ascii');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b[24] = 8;
  b[25] = 2;
  return b;
}

export function jpegHeader(width: number, height: number): Buffer {
  const app0 = [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00];
  const sof = [0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 255, width >> 8, width & 255, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
  return Buffer.from([...app0, ...sof]);
}

export type ImageServer = { base: string; port: number; hits: () => number; close: () => Promise<void> };

export async function startImageServer(): Promise<ImageServer> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    const path = (req.url ?? '').split('?')[0];
    const send = (type: string, body: Buffer | string) => { res.writeHead(200, { 'content-type': type }); res.end(body); };
    if (path === '/ok.png') return send('image/png', pngHeader(300, 200));
    if (path === '/ok.jpg') return send('image/jpeg', jpegHeader(300, 200));
    if (path === '/max.png') return send('image/png', pngHeader(3000, 3000));
    if (path === '/wide.png') return send('image/png', pngHeader(4000, 10));
    if (path === '/tall.jpg') return send('image/jpeg', jpegHeader(10, 3001));
    if (path === '/text') return send('text/plain', 'no image here');
    if (path === '/redirect') { res.writeHead(302, { location: '/ok.png' }); return res.end(); }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
