// Outgoing e-mail: through SMTP when configured, else written as .eml files to
// DATA_DIR/outbox so a single-machine install still shows what would be sent.
import fs from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { SmtpSettings } from '../config.js';
import { randomId } from '../ids.js';

export interface Mail { to: string; subject: string; text: string; html?: string }

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

export function createMailer(smtp: SmtpSettings | undefined, outboxDir: string): Mailer {
  if (smtp) {
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? '' } } : {}),
      // The relay's certificate is checked (TLS and STARTTLS alike): the mails carry Links and their
      // secrets. A relay with a private CA is trusted through --smtp-ca-file; --smtp-tls-insecure
      // takes any certificate, for a local relay with a self-signed one.
      tls: smtp.tlsInsecure ? { rejectUnauthorized: false } : { rejectUnauthorized: true, ...(smtp.ca ? { ca: readFileSync(smtp.ca) } : {}) },
    });
    return {
      async send(mail) {
        await transport.sendMail({ from: smtp.from, ...mail });
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const info = await transport.sendMail({ from: 'Ferry <no-reply@ferry.local>', ...mail });
      await fs.mkdir(outboxDir, { recursive: true });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomId(8)}.eml`;
      await fs.writeFile(path.join(outboxDir, name), info.message as Buffer);
    },
    close: () => transport.close(),
  };
}
