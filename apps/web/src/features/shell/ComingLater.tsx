/** Placeholder for a page a later release fills: says so plainly, shows no made-up data. */
export function ComingLater({ title, description }: { title: string; description: string }) {
  return (
    <section className="coming-later" aria-labelledby="coming-later-title" data-testid="coming-later">
      <h1 id="coming-later-title">{title}</h1>
      <p className="coming-later-badge">Coming in a later release</p>
      <p>{description}</p>
    </section>
  );
}
