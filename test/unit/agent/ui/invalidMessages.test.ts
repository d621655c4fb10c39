// Requests that do not fit their schema answer in words, with the field at fault
// (src/http/invalidMessage.ts): each form's bad input, through the handler table
// both hosts use. A union (the automation kinds) names the field of the kind that
// was meant, not the discriminator of another.
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import { dispatch, type Handlers } from '../../../../src/agent/ui/handlers.js';

/** Every channel answers "reached the handler": only validation answers errors here. */
const reached = new Proxy({} as Handlers, { get: () => async () => 'reached', getOwnPropertyDescriptor: () => ({ configurable: true, enumerable: true, value: async () => 'reached' }) });
const log = pino({ level: 'silent' });

const upload = { team_id: 't', paths: ['/tmp/a'] };
const CASES: [string, string, unknown, { message: string; field?: string }][] = [
  ['Send: a recipient that is no address', 'uploads.create', { ...upload, recipients: ['ed@example.com', 'bob@'] }, { message: '"bob@" is not an email address.', field: 'recipients/1' }],
  ['Send: a download limit below zero', 'uploads.create', { ...upload, download_limit: -1 }, { message: 'Download limit is at least 0.', field: 'download_limit' }],
  ['Send: an expiry of 0 days', 'uploads.create', { ...upload, delete_after: 0 }, { message: 'Expiry (days) is at least 1.', field: 'delete_after' }],
  ['Send: nothing to send', 'uploads.create', { team_id: 't', paths: [] }, { message: 'What to send needs at least one.', field: 'paths' }],
  ['Automations: a watch folder recipient "bob@"', 'automations.create', { type: 'team_upload', fields: { name: 'W', path: '/tmp/w', team_id: 't', recipient_emails: ['bob@'], timeout: 1 } }, { message: '"bob@" is not an email address.', field: 'fields/recipient_emails/0' }],
  ['Automations: no name', 'automations.create', { type: 'portal_download', fields: { portal_subdomain: 'p', dst_folder: '/tmp/d' } }, { message: 'Name is missing.', field: 'fields/name' }],
  ['Receive: an empty Link', 'downloads.preview', { url: '' }, { message: 'The Link is empty.', field: 'url' }],
  ['Sign in: an email that is no address', 'session.login', { email: 'owner', password: 'x' }, { message: '"owner" is not an email address.', field: 'email' }],
  ['Sign in: an empty password', 'session.login', { email: 'owner@example.com', password: '' }, { message: 'Password is empty.', field: 'password' }],
  ['Settings: a server that is no web address', 'settings.update', { hosted_url: 'ferry.example.com' }, { message: 'The server: "ferry.example.com" is not a web address (like https://ferry.example.com).', field: 'hosted_url' }],
  ['Settings: concurrency 0', 'settings.update', { concurrency: 0 }, { message: 'Concurrency is at least 1.', field: 'concurrency' }],
  ['Storage gateway: a name too long', 'gateways.register', { id: 'g', secret: 's', name: 'n'.repeat(300), root_path: '/tmp/g', permissions: 'w' }, { message: 'Name is longer than 255 characters.', field: 'name' }],
  ['Storage gateway: a connection ID with a space', 'gateways.register', { id: 'my gateway', secret: 's', name: 'n', root_path: '/tmp/g', permissions: 'w' }, { message: 'The connection ID holds letters, digits, - and _ only.', field: 'id' }],
  ['a number where text goes', 'uploads.pause', { upload_id: 5 }, { message: 'Upload id is text.', field: 'upload_id' }],
];

describe('a request that does not fit answers in words, with its field', () => {
  test.each(CASES)('%s', async (_what, channel, request, expected) => {
    const a = await dispatch(reached, channel, request, log);
    expect(a).toEqual({ ok: false, error: { code: 262145, ...expected } });
    expect(a.ok ? '' : a.error.message).not.toMatch(/must|request\/|constant/);
  });
});
