import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { listeningPorts, randomPort } from './processes.js';

// The ports the deployment tests and benches give their services: never one a program of the machine already
// listens on (RabbitMQ's 25672 was drawn once and the service refused to start), never the same one twice.
describe('randomPort', () => {
  it('sees the ports listened on, and hands out others, each once', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (server.address() as net.AddressInfo).port;
      expect(listeningPorts().has(port)).toBe(true);
      const taken = listeningPorts();
      const drawn = Array.from({ length: 500 }, () => randomPort());
      expect(new Set(drawn).size).toBe(drawn.length);
      for (const p of drawn) {
        expect(p).toBeGreaterThanOrEqual(20000);
        expect(p).toBeLessThan(32000);
        expect(taken.has(p)).toBe(false);
      }
    } finally {
      server.close();
    }
  });
});
