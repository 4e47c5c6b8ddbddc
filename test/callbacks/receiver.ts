import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  method: string;
  /** The request target (path and query). */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Responder = (call: ReceivedCallback, res: ServerResponse) => void;

/** A real HTTP receiver on a port of its own, recording every request it gets. */
export class Receiver {
  readonly received: ReceivedCallback[] = [];
  /** TCP connections accepted so far, and how many are open now. */
  connections = 0;
  openConnections = 0;
  private server: Server | undefined;

  constructor(private responder: Responder = (_call, res) => res.end('ok')) {}

  respondWith(responder: Responder): void {
    this.responder = responder;
  }

  /** Listens on the given port (0: a free one) and returns it. */
  async listen(port = 0): Promise<number> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const call = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(call);
        this.responder(call, res);
      });
    });
    server.on('connection', (socket) => {
      this.connections += 1;
      this.openConnections += 1;
      socket.once('close', () => (this.openConnections -= 1));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
