/** A refusal from the service: its status and its `Retry-After` (seconds), when it gave one. */
export class HttpRefusal extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
  }
}

/** POSTs JSON and answers the JSON body; a status of 300 or more throws an HttpRefusal (the benches' clients). */
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
  if (r.status >= 300) {
    const retryAfter = Number(r.headers.get('retry-after'));
    throw new HttpRefusal(
      `POST ${url} → ${r.status} ${JSON.stringify(json)}`,
      r.status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  return json;
}
