// The e-mail a recipient gets when a Package is sent to them: who sent what,
// how much, and the Link that opens it. Sent through ctx.mailer (SMTP or outbox).
import type { HostedContext } from '../context.js';
import type { PackagesTable } from '../db/schema.js';
import { bytes } from '../../format/sizes.js';

export interface Delivery { email: string; url: string }

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

type Pkg = Pick<PackagesTable, 'name' | 'description' | 'sender' | 'size' | 'total_files' | 'expiry'>;

/** A form response's answers, shown in the mail when the form delivers by email_body. */
export type FormLines = { label: string; value: string }[];

export function packageMail(pkg: Pkg, url: string, form: FormLines = []): { subject: string; text: string; html: string } {
  const files = `${pkg.total_files} ${pkg.total_files === 1 ? 'file' : 'files'}, ${bytes(pkg.size)}`;
  const until = pkg.expiry ? `Available until ${pkg.expiry.replace('T', ' ').slice(0, 16)} UTC.` : '';
  const text = [
    `${pkg.sender} sent you "${pkg.name}" (${files}).`,
    ...(pkg.description ? ['', pkg.description] : []),
    ...(form.length ? ['', 'Form answers:', ...form.map((l) => `${l.label}: ${l.value}`)] : []),
    '',
    'Download it here:',
    url,
    ...(until ? ['', until] : []),
  ].join('\n');
  const html = [
    `<p>${escapeHtml(pkg.sender)} sent you <strong>${escapeHtml(pkg.name)}</strong> (${escapeHtml(files)}).</p>`,
    ...(pkg.description ? [`<p>${escapeHtml(pkg.description).replace(/\n/g, '<br>')}</p>`] : []),
    ...(form.length ? [`<p>Form answers:</p>\n<ul>\n${form.map((l) => `<li>${escapeHtml(l.label)}: ${escapeHtml(l.value).replace(/\n/g, '<br>')}</li>`).join('\n')}\n</ul>`] : []),
    `<p><a href="${escapeHtml(url)}">Download it here</a></p>`,
    ...(until ? [`<p>${escapeHtml(until)}</p>`] : []),
  ].join('\n');
  const subject = `${pkg.sender} sent you ${pkg.name}`.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return { subject, text, html };
}

/**
 * Sends every recipient their own Link. A failed delivery is logged, not thrown:
 * the Package is finalized either way and the sender can make a new Link.
 */
export async function notifyRecipients(ctx: HostedContext, pkg: Pkg & { id: string }, deliveries: Delivery[], form: FormLines = []): Promise<void> {
  const results = await Promise.allSettled(
    deliveries.map((d) => ctx.mailer.send({ to: d.email, ...packageMail(pkg, d.url, form) })),
  );
  results.forEach((r, i) => {
    if (r.status === 'rejected') ctx.log.error({ err: r.reason, packageId: pkg.id, to: deliveries[i]!.email }, 'package e-mail not sent');
  });
}
