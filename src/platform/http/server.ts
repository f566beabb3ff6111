import { randomUUID } from 'node:crypto';
import http, { STATUS_CODES, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_CONTENT_TYPE, renderProblem } from './problem.js';

// The HTTP server around the express app, with the limits of a JSON API (spec 8): a request must send its
// headers within 10 s and be complete within 30 s, an idle keep-alive connection is closed after 5 s, and
// the headers of one request may not exceed 16 KiB. Requests node refuses before express sees them
// (oversized headers, a timeout, a malformed request line) still get a problem+json body.
export type ServerLimits = {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderSize: number;
  connectionsCheckingIntervalMs: number;
};

export const SERVER_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
  /** How often node checks the two timeouts above (its default, 30 s, would let a request linger 40 s). */
  connectionsCheckingIntervalMs: 2_000,
};

/** Headers suited to a JSON API, on every response (also the ones written below). */
export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Strict-Transport-Security': 'max-age=31536000',
};

/** `limits`: the defaults above; tests pass shorter timeouts. */
export function createHttpServer(app: RequestListener, limits: ServerLimits = SERVER_LIMITS): Server {
  // The response each connection is answering (the last request it brought), so a client error on it can tell
  // whether an answer is already under way: recorded here from the request event, not read from node's sockets.
  const responses = new WeakMap<Duplex, ServerResponse>();
  const server = http.createServer(
    { maxHeaderSize: limits.maxHeaderSize, connectionsCheckingInterval: limits.connectionsCheckingIntervalMs },
    (req, res) => {
      responses.set(req.socket, res);
      return app(req, res);
    },
  );
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => answerClientError(err, socket, limits, responses.get(socket)));
  return server;
}

/**
 * Node's own answer to these is a bare status line; ours is problem+json, and the connection is closed. A
 * connection whose answer has started (headers sent, not yet finished) is only closed: a second status line
 * would corrupt it.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex, limits: ServerLimits, last: ServerResponse | undefined): void {
  const answering = !!last && last.headersSent && !last.writableFinished;
  if (err.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const known: Record<string, { status: number; detail: string }> = {
    HPE_HEADER_OVERFLOW: { status: 431, detail: `The request headers are larger than ${limits.maxHeaderSize} bytes.` },
    ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time.' },
  };
  const { status, detail } = known[err.code ?? ''] ?? { status: 400, detail: 'The request is not valid HTTP.' };
  const requestId = randomUUID();
  const body = JSON.stringify({ ...renderProblem({ status, detail }), instance: `urn:request:${requestId}` });
  const headers = {
    ...SECURITY_HEADERS,
    'X-Request-Id': requestId,
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${head}\r\n${body}`);
}
