// A problem with what a form sends, shown beside the field that can fix it. The
// agent names the field of a request that does not fit its schema (`field`:
// `recipients/0`, `fields/recipient_emails/0`); a form's own checks name theirs.
// A problem no field of the form shows goes at the form's foot.

export interface Problem { message: string; field?: string }

/** The named parts of a field's path: `fields/recipient_emails/0` → fields, recipient_emails. */
const parts = (field: string) => field.split('/').filter((s) => !/^\d+$/.test(s));

/** Whether `p` is about one of `names` (the last named part of its path). */
export function isAbout(p: Problem | undefined, names: readonly string[]): boolean {
  const last = p?.field ? parts(p.field).pop() : undefined;
  return last !== undefined && names.includes(last);
}

/** What an input shows for `p` when it is about `names`: aria-invalid and the message's id. */
export function invalidProps(p: Problem | undefined, names: readonly string[], id: string, hint?: string) {
  const about = isAbout(p, names);
  const describedBy = [about ? id : undefined, hint].filter(Boolean).join(' ') || undefined;
  return { 'aria-invalid': about ? true : undefined, 'aria-describedby': describedBy } as const;
}

export function FieldProblem({ problem, names, id }: { problem: Problem | undefined; names: readonly string[]; id: string }) {
  if (!problem || !isAbout(problem, names)) return null;
  return <p className="error" id={id} role="alert">{problem.message}</p>;
}

/** The form's foot: the problem, unless a field among `placed` shows it. */
export function FormProblem({ problem, placed }: { problem: Problem | undefined; placed: readonly string[] }) {
  if (!problem || isAbout(problem, placed)) return null;
  return <p className="error" role="alert">{problem.message}</p>;
}
