import type { Logger } from '../logging/logger.js';

// A database that cannot be reached is an outage, not a bug: requests are answered 503 with Retry-After,
// and the log gets one warning when the outage starts and one line when the database answers again (a
// probe every second while it is down), instead of a stack trace per request.

/** Seconds a client should wait before trying again during an outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

const NODE_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
/** 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 53300 too many connections; 08xxx connection exceptions. */
const PG_UNAVAILABLE = /^(08...|57P0[123]|53300)$/;
const MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /connect ECONNREFUSED/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /terminating connection due to administrator command/i,
  /query_wait_timeout|server login retry|no more connections allowed|database does not allow connections/i,
];

/** Whether `err` (or one of its causes, or an AggregateError's parts) says the database cannot be reached. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown[]; name?: string };
  // A client's own hang-up also says ECONNRESET ("aborted"): that is not the database.
  if (isClientGone(err)) return false;
  if (typeof e.code === 'string' && (NODE_CONNECTION_CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))) return true;
  if (e.name === 'ConnectionException') return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/** A client that hung up before its answer: nothing to answer and nothing wrong with the service. */
export function isClientGone(err: unknown): boolean {
  const e = err as { code?: string; type?: string; message?: string; name?: string } | undefined;
  return !!e && (e.type === 'request.aborted' || e.code === 'ECONNABORTED' || e.code === 'ERR_STREAM_PREMATURE_CLOSE'
    || (e.code === 'ECONNRESET' && e.message === 'aborted') || e.message === 'aborted' || e.name === 'ClientGone');
}

export class ClientGone extends Error {
  override name = 'ClientGone';
  constructor() {
    super('the client closed the connection before the request was read');
  }
}

export class DatabaseAvailability {
  private downSince: number | null = null;
  private probing: NodeJS.Timeout | null = null;
  private listeners: ((down: boolean) => void)[] = [];

  constructor(private readonly log: Logger, private readonly probe: () => Promise<unknown>, private readonly probeEveryMs = 1000) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  onChange(listener: (down: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** A request failed because the database cannot be reached: warn once, then probe until it answers. */
  reportFailure(err: unknown): void {
    if (this.downSince !== null) return;
    this.downSince = Date.now();
    const e = err as { code?: string; message?: string };
    this.log.warn({ code: e?.code, reason: typeof e?.message === 'string' ? e.message.slice(0, 200) : undefined }, 'database unreachable: answering 503 until it is back');
    for (const l of this.listeners) l(true);
    this.schedule();
  }

  private schedule(): void {
    this.probing = setTimeout(() => void (async () => {
      this.probing = null;
      try {
        await this.probe();
        this.recovered();
      } catch {
        if (this.downSince !== null) this.schedule();
      }
    })(), this.probeEveryMs);
    this.probing.unref();
  }

  private recovered(): void {
    if (this.downSince === null) return;
    const ms = Date.now() - this.downSince;
    this.downSince = null;
    this.log.warn({ outageMs: ms }, 'database reachable again');
    for (const l of this.listeners) l(false);
  }

  close(): void {
    if (this.probing) clearTimeout(this.probing);
    this.probing = null;
  }
}
