import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';

// D1/D9: with SMTP_URL mails go out over SMTP; without it they are written as .eml files under
// `.data/mail/<tenant>/`, so a developer can read what families would get.
export type OutgoingMail = { id: string; tenant: string; from: string; to: string; subject: string; text: string };

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * SMTP connections are pooled (`maxConnections` in flight, reused for many mails) with bounded waits, so a
 * commit's thousands of family mails go out in seconds and a server that hangs fails the attempt instead of
 * the worker.
 */
export function createMailer(opts: { smtpUrl?: string; dataDir: string; maxConnections?: number }): Mailer {
  const pooled = (url: string) => {
    const u = new URL(url);
    if (!u.searchParams.has('pool')) u.searchParams.set('pool', 'true');
    if (!u.searchParams.has('maxConnections')) u.searchParams.set('maxConnections', String(opts.maxConnections ?? 8));
    if (!u.searchParams.has('maxMessages')) u.searchParams.set('maxMessages', '500');
    for (const [key, value] of [['connectionTimeout', '10000'], ['greetingTimeout', '10000'], ['socketTimeout', '30000']]) {
      if (!u.searchParams.has(key)) u.searchParams.set(key, value);
    }
    return u.toString();
  };
  const transport: Transporter = opts.smtpUrl
    ? nodemailer.createTransport(pooled(opts.smtpUrl))
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const info = await transport.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        // The outbox id as Message-ID: a retried send is recognisable as the same mail.
        messageId: `<${mail.id}@${mail.tenant}.holiday-programme>`,
      });
      if (!opts.smtpUrl) {
        const dir = path.resolve(opts.dataDir, 'mail', mail.tenant);
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, `${mail.id}.eml`), (info as unknown as { message: Buffer }).message);
      }
    },
    close: () => transport.close(),
  };
}
