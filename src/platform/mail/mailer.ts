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

export function createMailer(opts: { smtpUrl?: string; dataDir: string }): Mailer {
  const transport: Transporter = opts.smtpUrl
    ? nodemailer.createTransport(opts.smtpUrl)
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
