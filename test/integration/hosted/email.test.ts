// Package finalize e-mails every recipient their own Link: through a real SMTP
// server when one is configured, else into DATA_DIR/outbox as .eml files.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, uploadFile } from '../../helpers/flow.js';

interface Received { to: string[]; raw: string }

/** Undoes quoted-printable soft breaks and escapes, enough to read a URL out of a mail. */
const decodeQp = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

function linkIn(svc: TestService, raw: string): { id: string; secret: string; url: string } {
  const m = new RegExp(`${svc.url.replace(/[.]/g, '\\.')}/l/(lnk_[A-Za-z0-9]+)\\?secret=([A-Za-z0-9_-]+)`).exec(decodeQp(raw));
  expect(m, raw).not.toBeNull();
  return { url: m![0], id: m![1]!, secret: m![2]! };
}

async function sendPackage(svc: TestService, recipients: string[]) {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'Final cut', description: 'Version 3, color graded', recipients });
  await uploadFile(svc, pkg, 'cut.mov', '', Buffer.from('not really a movie'));
  await finalizePackage(svc, pkg);
  return pkg;
}

async function expectLinkWorks(svc: TestService, link: { id: string; secret: string; url: string }, email: string, packageId: string) {
  const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
  expect(info.status).toBe(200);
  expect(info.body).toMatchObject({ package_id: packageId, recipient_email: email, sender_email: 'owner@example.com' });
  const page = await fetch(link.url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('cut.mov');
}

describe('with an SMTP server', () => {
  let smtp: SMTPServer;
  let svc: TestService;
  const received: Received[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      secure: false,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    svc = await startTestService({ 'smtp-host': '127.0.0.1', 'smtp-port': String(port) });
  });
  afterAll(async () => {
    await svc?.close();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  it('sends each recipient a mail with their own working Link', async () => {
    const recipients = ['ann@example.com', 'bob@example.com'];
    const pkg = await sendPackage(svc, recipients);
    // Finalize answers before the mail is out; wait for the server to have both.
    await vi.waitFor(() => expect(received.map((r) => r.to).flat().sort()).toEqual(recipients), { timeout: 20_000 });
    const urls = new Set<string>();
    for (const mail of received) {
      const text = decodeQp(mail.raw);
      expect(text).toContain('owner@example.com');
      expect(text).toContain('Final cut');
      expect(text).toContain('Version 3, color graded');
      expect(text).toContain('1 file,');
      const link = linkIn(svc, mail.raw);
      urls.add(link.url);
      await expectLinkWorks(svc, link, mail.to[0]!, pkg.id);
    }
    expect(urls.size).toBe(2);
    const links = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/links`, { headers: pkg.h });
    expect(links.body.map((l: any) => l.email).sort()).toEqual(recipients);
  });
});

describe('without SMTP', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('writes each mail as an .eml file to DATA_DIR/outbox', async () => {
    const pkg = await sendPackage(svc, ['carol@example.com']);
    const outbox = path.join(svc.dataDir, 'outbox');
    const emls = async () => (await fs.readdir(outbox).catch(() => [] as string[])).filter((f) => f.endsWith('.eml'));
    // Finalize answers before the mail is written; wait until the file is complete.
    const raw = await vi.waitFor(
      async () => {
        const files = await emls();
        expect(files).toHaveLength(1);
        const text = await fs.readFile(path.join(outbox, files[0]!), 'utf8');
        expect(text).toContain('secret=');
        return text;
      },
      { timeout: 20_000 },
    );
    expect(raw).toMatch(/^To: carol@example\.com/m);
    await expectLinkWorks(svc, linkIn(svc, raw), 'carol@example.com', pkg.id);
  });
});
