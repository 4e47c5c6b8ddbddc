import { createServer } from 'node:net';

/**
 * Ports handed out here lie below Linux's default ephemeral range (32768–60999), from which the
 * kernel picks the local port of every outgoing connection and every listen(0): a port found free
 * there can be taken by any such socket before its new owner binds it (a dev server starting takes
 * a second or two).
 */
const LOW = 20_000;
const HIGH = 32_767;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port free right now on 127.0.0.1, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 200 tries`);
}
