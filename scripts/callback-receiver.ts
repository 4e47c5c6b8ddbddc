import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { signature } from '../src/callbacks/signing.js';

/**
 * A local receiver of caseflow's signed case callbacks, as a customer's
 * endpoint sees them (the benches and the chaos suite). Every request is
 * verified against the workspace secret and handed on; the chaos suite can
 * make it answer 503 or refuse connections for a while.
 */
export interface CallbackDelivery {
  webhookId: string;
  caseId: string;
  status: string;
  results: Record<string, { value: unknown }>;
  verified: boolean;
  /** performance.now() when it arrived. */
  at: number;
}

/** `ok`: 200 and handed on; `unavailable`: 503 (an attempt the service must retry); `refusing`: not listening. */
export type ReceiverMode = 'ok' | 'unavailable' | 'refusing';

export interface CallbackReceiver {
  url: string;
  setMode(mode: ReceiverMode): Promise<void>;
  close(): Promise<void>;
}

function verified(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const [id, ts, sigs] = [headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature']];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sigs !== 'string') return false;
  const expected = Buffer.from(signature(secret, id, Number(ts), body));
  return sigs.split(' ').some((s) => {
    const got = Buffer.from(s);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/** Listens on 127.0.0.1 (an ephemeral port, kept across a `refusing` spell) and calls `onDelivery` per 2xx answer. */
export async function startCallbackReceiver(
  secret: string,
  onDelivery: (delivery: CallbackDelivery) => void,
): Promise<CallbackReceiver> {
  let mode: ReceiverMode = 'ok';
  const answer = (res: ServerResponse, headers: IncomingHttpHeaders, body: string) => {
    if (mode !== 'ok') {
      res.statusCode = 503;
      res.end('unavailable');
      return;
    }
    res.end('ok');
    const payload = JSON.parse(body) as { caseId: string; status: string; results?: CallbackDelivery['results'] };
    onDelivery({
      webhookId: String(headers['webhook-id']),
      caseId: payload.caseId,
      status: payload.status,
      results: payload.results ?? {},
      verified: verified(secret, headers, body),
      at: performance.now(),
    });
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(res, req.headers, Buffer.concat(chunks).toString('utf8')));
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const closed = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Kept-alive sockets would otherwise still reach the closed listener.
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    setMode: async (next) => {
      if (next === 'refusing' && mode !== 'refusing') await closed();
      if (next !== 'refusing' && mode === 'refusing') await listen(port);
      mode = next;
    },
    close: () => (mode === 'refusing' ? Promise.resolve() : closed()),
  };
}
