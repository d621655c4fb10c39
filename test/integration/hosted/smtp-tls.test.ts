// The mailer checks the SMTP relay's certificate: a relay whose certificate no
// trusted CA signed gets no mail (the mails carry Links and their secrets),
// unless the operator names its CA (--smtp-ca-file) or turns the check off for
// a local relay (--smtp-tls-insecure). A real SMTP server with STARTTLS.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveHostedConfig } from '../../../src/hosted/config.js';
import { createMailer } from '../../../src/hosted/mail/mailer.js';

let dir: string;
let smtp: SMTPServer;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-smtp-'));
  // A self-signed certificate for 127.0.0.1: its own CA.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=relay.test',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
  smtp = new SMTPServer({
    authOptional: true,
    key: await fs.readFile(path.join(dir, 'key.pem')),
    cert: await fs.readFile(path.join(dir, 'cert.pem')),
    onData(stream, session, done) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((r) => r.address).join(','));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  await fs.rm(dir, { recursive: true, force: true });
});

function mailerWith(flags: Record<string, string | boolean>) {
  const { smtp: settings } = resolveHostedConfig({ 'smtp-host': '127.0.0.1', 'smtp-port': String(port), ...flags }, {});
  return createMailer(settings, path.join(dir, 'outbox'));
}

async function sendTo(flags: Record<string, string | boolean>, to: string) {
  const mailer = mailerWith(flags);
  try {
    await mailer.send({ to, subject: 'Your files', text: 'https://ferry.test/l/x?secret=s' });
  } finally {
    mailer.close();
  }
}

describe('SMTP certificates', () => {
  it('by default a relay whose certificate no trusted CA signed gets nothing', async () => {
    await expect(sendTo({}, 'default@example.com')).rejects.toThrow(/self[- ]signed|certificate/i);
    expect(received).not.toContain('default@example.com');
  });

  it('--smtp-ca-file trusts the relay through its CA', async () => {
    await sendTo({ 'smtp-ca-file': path.join(dir, 'cert.pem') }, 'ca@example.com');
    expect(received).toContain('ca@example.com');
  });

  it('--smtp-tls-insecure takes any certificate', async () => {
    await sendTo({ 'smtp-tls-insecure': true }, 'insecure@example.com');
    expect(received).toContain('insecure@example.com');
  });
});
