// A Settings section's draft: made from the agent's settings, and made again
// when they change, unless the person has edits there not yet saved. Each
// section saves on its own (the form's Save, "Apply queueing", "Apply limits"),
// and every save or reload of the settings gives the screen new settings: that
// must not take away what is being typed in another section.
import { useEffect, useState } from 'react';
import type { AgentSettings } from '../../../src/api/agent/settings.js';

export function useSettingsDraft<D>(settings: AgentSettings | undefined, draftOf: (s: AgentSettings) => D) {
  const [draft, setDraft] = useState<D | undefined>(() => settings && draftOf(settings));
  const [dirty, setDirty] = useState(false);
  useEffect(() => {
    if (settings && !dirty) setDraft(draftOf(settings));
    // draftOf is a module's function, the same at every render.
  }, [settings, dirty]);
  return {
    draft,
    /** A person's edit: kept whatever the settings do until `settled`. */
    edit(change: (d: D) => D) {
      setDirty(true);
      setDraft((d) => (d === undefined ? d : change(d)));
    },
    /** Saved (or nothing to save): the draft follows the settings again. */
    settled: () => setDirty(false),
  };
}
