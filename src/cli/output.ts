import { Console } from 'node:console';

// stdout carries only a command's output; notes, logs and errors go to stderr.

let stdoutClosed = false;

function isEpipe(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EPIPE';
}

/**
 * Writes one line of command output to stdout and waits until it is handed to the OS. A reader that went
 * away (`cli -- token list x | head -1`) ends the output, not the command: the runtime is still closed.
 */
export function out(line: string): Promise<void> {
  if (stdoutClosed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    process.stdout.write(`${line}\n`, (err) => {
      if (err && isEpipe(err)) stdoutClosed = true;
      if (err && !isEpipe(err)) reject(err);
      else resolve();
    });
  });
}

/** `--json` output (issue 24): one JSON document on stdout, indented for people, parseable by tools. */
export function outJson(value: unknown): Promise<void> {
  return out(JSON.stringify(value, null, 2));
}

/** A human note for the operator, on stderr. */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A value inside a tab-separated line: no tabs or line breaks of its own. */
export function field(value: string | null | undefined): string {
  if (value == null || value === '') return '-';
  return value.replace(/[\t\r\n]+/g, ' ');
}

/**
 * Libraries that log through `console` (the ORM's logger among them) must never reach stdout, or a
 * script reading the token off the last line would pick up noise.
 */
export function setUpStreams(): void {
  process.stdout.on('error', (err) => {
    if (isEpipe(err)) stdoutClosed = true;
  });
  // A console of our own on stderr in place of the global one (issue 26: not a patch of Node's console methods).
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr, colorMode: false });
}
