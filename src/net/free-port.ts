import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Ports handed out here lie below Linux's default ephemeral range (32768–60999), from which the
 * kernel picks the local port of every outgoing connection and every listen(0): a port found free
 * there can be taken by any such socket before its new owner binds it (a dev server starting takes
 * a second or two).
 */
const LOW = 20_000;
const HIGH = 32_767;

/**
 * A port handed out stays reserved while the process that took it lives: a file named for it here, holding that
 * pid. Its owner may bind it many seconds later (a bench's service binds its API port once its dev server has
 * started), and until then another test or bench choosing ports, in this process or another, would find it free
 * too: a bench's service once met another's Temporal UI on its port (`GET /api/v1/me → 404 {"code":5}`).
 */
const reservations = path.join(os.tmpdir(), 'caseflow-ports');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `file` held `pid` when it was linked to `claim`: files here are only ever replaced whole, never rewritten. */
function holds(claim: string, pid: number): boolean {
  try {
    return Number(readFileSync(claim, 'utf8')) === pid;
  } catch {
    return false;
  }
}

/**
 * Whether `port` is now reserved for this process: made exclusively, or taken over from an owner that is gone.
 *
 * A reservation is written whole to a file of our own, then linked (made only if none exists) or renamed (replacing a
 * dead owner's) into place, so it never reads half-written. Two processes may both find the same owner dead: the
 * take-over is theirs who first links the stale file to a claim named for that owner (link fails if it exists); the
 * other backs off, and so does a late taker whose claim turns out to hold a newer reservation. A process that dies
 * between claim and rename leaves that port unreservable until the directory is cleared (a reboot): one port of
 * 12,768. A dead owner's pid reused by another process keeps its port reserved until that one exits: a port lost for a
 * while, never one handed out twice.
 */
function reserve(port: number): boolean {
  const file = path.join(reservations, String(port));
  const mine = `${file}.${process.pid}.new`;
  writeFileSync(mine, String(process.pid));
  try {
    try {
      linkSync(mine, file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner: number;
    try {
      owner = Number(readFileSync(file, 'utf8'));
    } catch {
      return false; // its owner's file went away in between: leave the port to whoever is at it
    }
    if (alive(owner)) return false;
    const claim = `${file}.taking-from-${owner}`;
    try {
      linkSync(file, claim);
    } catch {
      return false; // another process is taking it over, or the file went away
    }
    try {
      if (!holds(claim, owner)) return false; // taken over and released since we read it
      renameSync(mine, file);
      return true;
    } finally {
      rmSync(claim, { force: true });
    }
  } finally {
    rmSync(mine, { force: true });
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port free right now on 127.0.0.1, outside the ephemeral range, and reserved for this process's life. */
export async function freePort(): Promise<number> {
  mkdirSync(reservations, { recursive: true });
  for (let tries = 0; tries < 200; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (!(await bindable(port))) continue;
    if (reserve(port)) return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 200 tries`);
}
