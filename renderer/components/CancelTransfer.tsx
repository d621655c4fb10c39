// The button that ends a transfer. While it is not over, "Cancel" asks first in a
// small modal dialog that names the transfer and what is done ("Keep
// transferring" has focus; Escape keeps it too); confirmed, the agent stops it and
// keeps it in the list as canceled. A complete or canceled one shows "Remove",
// which only clears its line from the history, without asking. The dialog sits
// under <body> (a portal), as the file chooser does, and focus returns to the
// row's button when it closes.
import { useEffect, useId, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { useApp } from '../store/context.js';
import type { Transfer } from '../store/index.js';
import { bytes } from '../format.js';
import { isCanceled } from './transferStatus.js';

/** What canceling stops, in words: what is done and what will not be. */
function consequence(t: Transfer): string {
  const done = `${bytes(t.progress)} of ${bytes(t.size)}`;
  if (t.direction === 'upload') {
    if (t.state === 'idle') return `All ${bytes(t.size)} are sent, but the Package is not finished yet; canceled, it will not be.`;
    return t.progress > 0 ? `${done} are sent; the rest will not be.` : 'Nothing is sent yet, and nothing will be.';
  }
  if (t.progress === 0) return 'Nothing is received yet, and nothing will be.';
  return `${done} are received; the rest will not be. Files already complete stay in the folder, a partly written one is removed.`;
}

function ConfirmCancel({ t, name, onKeep, onCancel }: { t: Transfer; name: string; onKeep(): void; onCancel(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  const title = useId();
  const text = useId();
  useEffect(() => {
    const opener = document.activeElement;
    dialog.current?.showModal();
    keep.current?.focus();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return createPortal(
    <dialog ref={dialog} className="chooser confirm" aria-modal="true" aria-labelledby={title} aria-describedby={text} onCancel={(e) => (e.preventDefault(), onKeep())}>
      <h2 id={title}>Cancel the {t.direction} of {name}?</h2>
      <p id={text}>{consequence(t)}</p>
      <div className="form-foot">
        <button type="button" ref={keep} onClick={onKeep}>
          Keep transferring
        </button>
        <button type="button" className="danger" onClick={onCancel}>
          Cancel transfer
        </button>
      </div>
    </dialog>,
    document.body,
  );
}

export function CancelTransfer({ t, name, onProblem }: { t: Transfer; name: string; onProblem(message: string | undefined): void }) {
  const call = useApp((s) => s.call);
  const [asking, setAsking] = useState(false);
  const over = t.state === 'complete' || isCanceled(t);
  const remove = async () => {
    const r = t.direction === 'upload' ? await call('uploads.remove', { upload_id: t.upload_id }) : await call('downloads.remove', { download_id: t.download_id });
    onProblem(r.ok ? undefined : r.error.message);
  };
  const cancel = async () => {
    setAsking(false);
    const r = t.direction === 'upload' ? await call('uploads.cancel', { upload_id: t.upload_id }) : await call('downloads.cancel', { download_id: t.download_id });
    onProblem(r.ok ? undefined : r.error.message);
  };
  // One button whose word changes, so that focus stays on it when a canceled transfer turns to "Remove".
  return (
    <>
      <button type="button" aria-label={`${over ? 'Remove' : 'Cancel'} ${name}`} aria-haspopup={over ? undefined : 'dialog'} onClick={over ? remove : () => setAsking(true)}>
        {over ? 'Remove' : 'Cancel'}
      </button>
      {asking && !over && <ConfirmCancel t={t} name={name} onKeep={() => setAsking(false)} onCancel={() => void cancel()} />}
    </>
  );
}
