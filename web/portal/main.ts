// The Portal upload page: choose files and folders (pickers or drop), see each
// checked against the Portal's limits, fill in who sends and what the Portal asks
// (its form, its terms, its access code), and send straight to the store with
// per-file and total progress. The Portal comes from the page's JSON data block.
import type { PublicPortal } from '../../src/api/hosted/portals.js';
import { Meter } from '../../src/format/meter.js';
import { bytes, speed } from '../../src/format/sizes.js';
import { timeLeft } from '../../src/format/times.js';
import { api, ApiError } from './api.js';
import { fileProblem, nameProblem, packageProblem } from './checks.js';
import { PortalUpload } from './engine.js';
import { h, renderField, responseBody, visibleFields, type RenderedField } from './form.js';
import { fromDrop, fromInput, merge, relOf, type Item } from './pick.js';
import { load } from './resume.js';

const portal = JSON.parse(document.getElementById('portal-data')!.textContent!) as PublicPortal;
const app = document.getElementById('app')!;
const fields = portal.custom_metadata ?? [];
const has = (type: string) => fields.some((f) => f.type === type);
const terms = portal.terms_of_service_enabled && portal.terms_of_service ? portal.terms_of_service : undefined;

let items: Item[] = [];
let upload: PortalUpload | undefined;
let failure: string | undefined;

// --- Choosing files --------------------------------------------------------
const filesInput = h('input', { type: 'file', multiple: true, hidden: true, id: 'pick-files', tabIndex: -1 });
const folderInput = h('input', { type: 'file', multiple: true, hidden: true, id: 'pick-folder', tabIndex: -1 });
folderInput.setAttribute('webkitdirectory', '');
const addFiles = h('button', { type: 'button', className: 'ghost' }, 'Add files');
const addFolder = h('button', { type: 'button', className: 'ghost' }, 'Add folder');
const drop = h('div', { className: 'drop', id: 'drop' },
  h('p', {}, 'Drop files or folders here'),
  h('div', { className: 'actions', style: 'justify-content:center' }, addFiles, addFolder),
  filesInput, folderInput);
addFiles.onclick = () => filesInput.click();
addFolder.onclick = () => folderInput.click();
const add = (more: Item[]) => {
  items = merge(items, more);
  failure = undefined;
  render();
};
filesInput.onchange = () => {
  add(fromInput(filesInput.files!));
  filesInput.value = '';
};
folderInput.onchange = () => {
  add(fromInput(folderInput.files!));
  folderInput.value = '';
};
drop.ondragover = (e) => {
  e.preventDefault();
  drop.classList.add('over');
};
drop.ondragleave = () => drop.classList.remove('over');
drop.ondrop = async (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  if (e.dataTransfer && !upload) add(await fromDrop(e.dataTransfer));
};

const list = h('ul', { className: 'files', 'aria-label': 'Files to send' });
const summary = h('p', { className: 'muted', id: 'summary' });
const packageError = h('p', { className: 'err', id: 'package-error' });

// --- Who sends, and what the Portal asks ----------------------------------------
const saved = load(portal.id);
function plainField(id: string, label: string, input: HTMLInputElement | HTMLTextAreaElement, hint?: string) {
  const err = h('span', { className: 'err', id: `${id}-err` });
  input.id = id;
  input.setAttribute('aria-describedby', `${id}-err`);
  return { el: h('div', { className: 'field' }, h('label', { htmlFor: id }, label), ...(hint ? [h('span', { className: 'hint' }, hint)] : []), input, err), input, err };
}
const sender = plainField('sender', 'Your e-mail', h('input', { type: 'email', required: true, autocomplete: 'email', value: saved?.sender ?? '' }));
const name = plainField('package-name', 'Name (optional)', h('input', { type: 'text', value: saved?.name ?? '' }), 'What the recipients see; the first file or folder name when empty.');
const description = plainField('package-description', 'Message (optional)', h('textarea', { rows: 3 }));
const code = plainField('access-code', 'Access code', h('input', { type: 'password', required: true, autocomplete: 'off' }), 'The Portal\'s owner gave it to you with its address.');
const rendered: RenderedField[] = visibleFields(fields).map(renderField);
const termsBox = h('input', { type: 'checkbox', id: 'terms' });
const termsErr = h('span', { className: 'err', id: 'terms-err' });
termsBox.setAttribute('aria-describedby', 'terms-err');
const termsEl = terms
  ? h('div', { className: 'field' },
      h('h2', {}, terms.title),
      h('div', { className: 'terms-text', tabIndex: 0, role: 'region', 'aria-label': terms.title }, terms.text),
      h('label', { className: 'choice', htmlFor: 'terms' }, termsBox, 'I accept these terms'),
      termsErr)
  : undefined;

const send = h('button', { type: 'submit', id: 'send' }, 'Send');
const why = h('span', { className: 'muted', id: 'why' });
const formEl = h('form', { noValidate: true, 'aria-label': `Send files to ${portal.name}` },
  drop, list, summary, packageError,
  ...(has('sender_email') ? [] : [sender.el]),
  ...(has('package_name') ? [] : [name.el]),
  ...(has('package_description') ? [] : [description.el]),
  ...rendered.map((r) => r.el),
  ...(portal.has_access_code ? [code.el] : []),
  ...(termsEl ? [termsEl] : []),
  h('div', { className: 'actions' }, send, why));

const resumeNote = saved
  ? h('p', { className: 'banner', id: 'resume-note' }, `An upload of ${Object.keys(saved.files).length} files to this Portal stopped before it was done. Choose the same files again and press Send: only what is missing is sent.`)
  : undefined;
const banner = h('p', { className: 'banner', id: 'waiting', hidden: true, role: 'status' });
const total = h('div', { className: 'total', hidden: true },
  h('div', { className: 'bar', role: 'progressbar', 'aria-label': 'Sent in all', 'aria-valuemin': '0', 'aria-valuemax': '100' }, h('span')),
  h('p', { className: 'stats', id: 'stats' }));
const done = h('div', { hidden: true, id: 'done' });

if (portal.user_authentication_required) {
  app.append(h('p', { className: 'err' }, 'This Portal takes files from signed-in members of its Team only. Use the Ferry app to send to it.'));
} else {
  app.append(...(resumeNote ? [resumeNote] : []), formEl, banner, total, done);
}

// --- Rendering -------------------------------------------------------------------
const rows = new Map<Item, HTMLLIElement>();
function row(i: Item): HTMLLIElement {
  let li = rows.get(i);
  if (li) return li;
  const remove = h('button', { type: 'button', className: 'remove', 'aria-label': `Remove ${relOf(i)}`, title: 'Remove' }, '×');
  remove.onclick = () => {
    items = items.filter((x) => x !== i);
    render();
  };
  li = h('li', {},
    h('div', { className: 'row' }, h('span', { className: 'name' }, relOf(i)), h('span', { className: 'size' }, bytes(i.file.size)), remove),
    h('div', { className: 'err problem' }),
    h('div', { className: 'bar', role: 'progressbar', 'aria-label': `Sent of ${relOf(i)}`, 'aria-valuemin': '0', 'aria-valuemax': '100' }, h('span')));
  rows.set(i, li);
  return li;
}

function setBar(bar: Element, fraction: number) {
  const pct = Math.round(fraction * 1000) / 10;
  (bar.firstElementChild as HTMLElement).style.width = `${pct}%`;
  bar.setAttribute('aria-valuenow', String(Math.floor(pct)));
}

/** Why Send cannot run yet, or undefined. */
function blocker(): string | undefined {
  if (items.length === 0) return 'Add at least one file.';
  if (items.some((i) => fileProblem(portal.restrictions, i))) return 'Remove the files marked above.';
  return packageProblem(portal.restrictions, items);
}

function render() {
  const sending = !!upload;
  list.replaceChildren(...items.map((i) => {
    const li = row(i);
    const p = fileProblem(portal.restrictions, i);
    li.querySelector('.problem')!.textContent = p ?? '';
    (li.querySelector('button.remove') as HTMLButtonElement).hidden = sending;
    const st = upload?.files.get(i);
    li.className = st?.state === 'done' ? 'done' : '';
    (li.querySelector('.bar') as HTMLElement).hidden = !st;
    if (st) setBar(li.querySelector('.bar')!, i.file.size ? st.sent / i.file.size : 1);
    return li;
  }));
  list.hidden = items.length === 0;
  const size = items.reduce((n, i) => n + i.file.size, 0);
  summary.textContent = items.length ? `${items.length} ${items.length === 1 ? 'file' : 'files'}, ${bytes(size)}` : '';
  packageError.textContent = packageProblem(portal.restrictions, items) ?? '';
  drop.hidden = sending;
  send.disabled = sending;
  why.textContent = sending ? '' : (failure ?? blocker() ?? '');
  why.className = failure ? 'err' : 'muted';
}

const meter = new Meter();
let frame = 0;
function progress() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    if (!upload) return;
    render();
    total.hidden = false;
    const sent = upload.sent, all = upload.total;
    meter.add(performance.now(), sent);
    setBar(total.firstElementChild!, all ? sent / all : 1);
    const rate = meter.rate();
    total.querySelector('#stats')!.textContent = [`${bytes(sent)} of ${bytes(all)}`, ...(rate ? [speed(rate), timeLeft((all - sent) / rate)] : [])].join(' · ');
    banner.hidden = !upload.waiting;
    banner.textContent = upload.waiting ?? '';
  });
}

// --- Sending -----------------------------------------------------------------------
function check(): boolean {
  let ok = true;
  const mark = (err: HTMLElement, m: string | undefined) => {
    err.textContent = m ?? '';
    if (m) ok = false;
  };
  if (!has('sender_email')) mark(sender.err, sender.input.value.trim() === '' ? 'Enter your e-mail address.' : sender.input.validity.valid ? undefined : 'Enter a valid e-mail address.');
  if (!has('package_name')) mark(name.err, nameProblem(portal.restrictions, packageName()));
  if (portal.has_access_code) mark(code.err, code.input.value === '' ? 'Enter the access code.' : undefined);
  for (const r of rendered) {
    const p = r.problem();
    r.showError(p);
    if (p) ok = false;
  }
  if (terms) mark(termsErr, termsBox.checked ? undefined : 'Accept the terms to send.');
  return ok;
}

const formValue = (type: string) => {
  const r = rendered.find((x) => x.field.type === type);
  const v = r?.value();
  return typeof v === 'string' && v ? v : undefined;
};
function packageName(): string {
  const first = items[0];
  const fallback = first ? (first.path.split('/')[0] || first.name) : 'Files';
  return formValue('package_name') ?? (name.input.value.trim() || fallback);
}

async function makeBody() {
  const body: Record<string, unknown> & { name: string; sender: string } = {
    name: packageName(),
    description: formValue('package_description') ?? description.input.value.trim(),
    sender: formValue('sender_email') ?? sender.input.value.trim(),
  };
  if (terms) body.terms_accepted = true;
  // A required form with only hidden fields shows nothing but still needs a (default) response.
  if (fields.length || portal.custom_metadata_required) {
    const headers: Record<string, string> = portal.has_access_code ? { 'x-access-code': encodeURIComponent(code.input.value) } : {};
    const r = await api<{ id: string }>('POST', `/v1/portals/${portal.id}/form/responses`, responseBody(fields, rendered), headers);
    body.form_data_id = r.id;
  }
  return body;
}

formEl.onsubmit = async (e) => {
  e.preventDefault();
  // Both: every field's error shows at once, beside the files' reason.
  const ready = check();
  if (upload || blocker() || !ready) {
    render();
    formEl.querySelector<HTMLElement>('.err:not(:empty)')?.closest('.field')?.querySelector<HTMLElement>('input,textarea,select')?.focus();
    return;
  }
  failure = undefined;
  upload = new PortalUpload({ portalId: portal.id, accessCode: portal.has_access_code ? code.input.value : undefined, items, makeBody }, progress);
  resumeNote?.remove();
  for (const el of formEl.querySelectorAll<HTMLInputElement>('input,textarea,select')) el.disabled = true;
  render();
  try {
    await upload.run();
    const n = items.length;
    resumeNote?.remove();
    formEl.hidden = true;
    banner.hidden = true;
    total.hidden = true;
    done.hidden = false;
    const again = h('button', { type: 'button', className: 'ghost' }, 'Send more files');
    again.onclick = () => location.reload();
    done.replaceChildren(
      h('h2', { className: 'ok', tabIndex: -1 }, `Sent: ${n} ${n === 1 ? 'file' : 'files'}, ${bytes(upload.total)}`),
      h('p', {}, `${portal.name} has received them.`),
      again);
    (done.firstElementChild as HTMLElement).focus();
  } catch (err) {
    failure = err instanceof ApiError ? explain(err) : `The upload stopped: ${(err as Error).message}`;
    upload = undefined;
    for (const el of formEl.querySelectorAll<HTMLInputElement>('input,textarea,select')) el.disabled = false;
    banner.hidden = true;
    if (err instanceof ApiError && err.code === 'invalid_access_code') code.err.textContent = 'Wrong access code. Check it and try again.';
    render();
  }
};

function explain(err: ApiError): string {
  if (err.code === 'invalid_access_code' || err.code === 'access_code_required') return 'Wrong access code.';
  if (err.status === 413) return `${err.message} Remove files to fit the Portal's limits.`;
  return `${err.message} Press Send to try again: what was sent is kept.`;
}

render();
