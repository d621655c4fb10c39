// The Team a send or an automation goes to, among the signed-in user's Teams.
import { useApp } from '../store/context.js';

export function TeamField({ value, onChange }: { value: string; onChange(teamId: string): void }) {
  const teams = useApp((s) => s.session?.teams ?? []);
  return (
    <label>
      Team
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        {teams.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
      </select>
    </label>
  );
}
