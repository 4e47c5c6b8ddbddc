import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../src/net/free-port.js';

/**
 * A Postgres instance of the chaos suite's own, from the machine's binaries
 * (/usr/lib/postgresql/<version>/bin), in a temporary directory, run as the
 * `postgres` user on a free loopback port, so it can be stopped and started
 * again without touching the machine's shared server.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication on loopback). */
  url: string;
  /** An immediate stop (no checkpoint, as a crash), or a start on the same data. */
  stop(): void;
  start(): void;
  /** Stops it if running and removes its directory. */
  destroy(): void;
}

const owner = process.env.CHAOS_POSTGRES_USER ?? 'postgres';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const version = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`no PostgreSQL binaries under ${root}`);
  return path.join(root, version, 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-chaos-pg-'));
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  const { uid, gid } = userIds(owner);
  chownSync(dir, uid, gid);
  // Postgres refuses to run as root: every command runs as the owner of the data directory.
  const asOwner = (command: string, args: string[]) =>
    execFileSync('runuser', ['-u', owner, '--', path.join(bin, command), ...args], { stdio: 'pipe', cwd: dir });
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const ctl = (...args: string[]) => asOwner('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'log'), ...args]);
  let running = false;
  const start = () => {
    ctl('start', '-w', '-t', '60', '-o', options);
    running = true;
  };
  const stop = () => {
    ctl('stop', '-m', 'immediate', '-w');
    running = false;
  };
  asOwner('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: () => {
      if (running) stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function userIds(name: string): { uid: number; gid: number } {
  const ids = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: ids('-u'), gid: ids('-g') };
}
