/** Walks a table in key order, a page at a time: `fetch(after)` returns the rows after that key. */
export async function forEachRow<T>(
  fetch: (after: string) => Promise<T[]>,
  keyOf: (row: T) => string,
  visit: (row: T) => Promise<void>,
): Promise<void> {
  let after = '';
  for (;;) {
    const page = await fetch(after);
    for (const row of page) await visit(row);
    const last = page.at(-1);
    if (last === undefined) return;
    after = keyOf(last);
  }
}
