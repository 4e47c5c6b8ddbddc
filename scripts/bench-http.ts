/** POSTs JSON and answers the JSON body; a status of 300 or more throws (the benches' clients). */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`POST ${url} → ${r.status} ${JSON.stringify(json)}`);
  return json;
}
