// The button that ends a transfer: Cancel while it runs, Remove once complete.
import { useApp } from '../store/context.js';
import type { Transfer } from '../store/index.js';

export function CancelTransfer({ t, name, onProblem }: { t: Transfer; name: string; onProblem(message: string | undefined): void }) {
  const call = useApp((s) => s.call);
  const remove = async () => {
    const r = t.direction === 'upload' ? await call('uploads.remove', { upload_id: t.upload_id }) : await call('downloads.remove', { download_id: t.download_id });
    onProblem(r.ok ? undefined : r.error.message);
  };
  return <button type="button" aria-label={`${t.state === 'complete' ? 'Remove' : 'Cancel'} ${name}`} onClick={remove}>{t.state === 'complete' ? 'Remove' : 'Cancel'}</button>;
}
