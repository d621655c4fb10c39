// A place whose feature the agent does not have yet: it says so plainly.
export function NotYet({ title, what }: { title: string; what: string }) {
  return (
    <section aria-labelledby="place-title">
      <h1 id="place-title">{title}</h1>
      <div className="empty">
        <p>{what} are not available in this version of Ferry yet.</p>
        <p className="muted">Send, Receive and Transfers work today.</p>
      </div>
    </section>
  );
}
