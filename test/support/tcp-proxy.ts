import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones, as a database that went away. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  /** Passes no byte either way, on open connections and new ones, which stay open: a server that never answers. */
  stall(): void;
  /** Passes bytes again, those held during the stall first. */
  unstall(): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `target`, for outages of a real server without touching the server. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let stalled = false;
  let server: Server | undefined;
  let port = 0;
  const flow = ([client, upstream]: [Socket, Socket]) => client.pipe(upstream).pipe(client);
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(target.port, target.host);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        for (const socket of pair) {
          sockets.add(socket);
          socket.on('close', () => {
            sockets.delete(socket);
            pairs.delete(pair);
          });
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        if (!stalled) flow(pair);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        server = s;
        resolve();
      });
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  const stall = () => {
    stalled = true;
    for (const [client, upstream] of pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  };
  const unstall = () => {
    stalled = false;
    for (const pair of pairs) flow(pair);
  };
  await listen();
  return { port, cut, restore: listen, stall, unstall, close: cut };
}
