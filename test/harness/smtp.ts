import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

// A real SMTP server in the test process (D9 tests): records every accepted message with its Message-ID and
// the time it was accepted, and can refuse (4xx, as a server that is down for a while) or stall messages.
export type ReceivedMail = { messageId: string; from: string; to: string[]; subject: string; raw: string; at: number };

export type TestSmtp = {
  url: string;
  received: ReceivedMail[];
  /** While true, every message is refused with a temporary error. */
  refuse: boolean;
  /** Milliseconds each message is held before it is accepted (a slow server). */
  delayMs: number;
  /** Resolves when `count` messages matching `pick` arrived, or rejects after `timeoutMs`. */
  waitFor(count: number, pick?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
};

const header = (raw: string, name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(raw)?.[1]?.trim() ?? '';

export async function startSmtp(): Promise<TestSmtp> {
  const state = { refuse: false, delayMs: 0 };
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 1024 * 1024,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const finish = () => {
          if (state.refuse) {
            const err = new Error('Service temporarily unavailable') as Error & { responseCode: number };
            err.responseCode = 451;
            return cb(err);
          }
          received.push({
            messageId: header(raw, 'Message-ID'),
            from: session.envelope.mailFrom ? String((session.envelope.mailFrom as { address: string }).address) : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: header(raw, 'Subject'),
            raw,
            at: Date.now(),
          });
          cb();
        };
        if (state.delayMs > 0) setTimeout(finish, state.delayMs);
        else finish();
      });
    },
  });
  // A client killed mid-session (the killed-worker tests) resets its connection: no error of the server's.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    get refuse() { return state.refuse; },
    set refuse(v: boolean) { state.refuse = v; },
    get delayMs() { return state.delayMs; },
    set delayMs(v: number) { state.delayMs = v; },
    async waitFor(count, pick = () => true, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = received.filter(pick);
        if (got.length >= count) return got;
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${count} mails, got ${got.length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The text of a received mail as the family reads it: the body after the headers, quoted-printable or base64
 * decoded as its Content-Transfer-Encoding says (nodemailer picks one for non-ASCII text).
 */
export function mailText(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split);
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const encoding = header(head, 'Content-Transfer-Encoding').toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding !== 'quoted-printable') return body;
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** A header value with its RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) decoded, e.g. a German subject. */
export function decodedHeader(value: string): string {
  return value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) => {
    if (enc.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
    const bytes = text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}
