import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import os from 'node:os';
import { stopChild } from '../src/temporal/dev-server.js';

/**
 * A bench subject's processes, each in a process group of its own, so that stopping one also ends whatever it
 * started: a service signalled while still starting has no handler yet and dies leaving its embedded Temporal dev
 * server (and any Python sandbox) running. Out of the terminal's group (and, detached, in a session of their own)
 * they no longer get its Ctrl-C nor its hang-up, so the bench ends the groups still open when it exits or is ended by
 * SIGINT, SIGTERM or SIGHUP. A bench killed with SIGKILL runs no hook: its subjects keep running and must be ended by
 * hand (`pkill -g <pgid>`).
 */
const open = new Set<number>();

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

let exitHooked = false;

function killOpenGroupsOnExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const pgid of open) killGroup(pgid);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
  }
}

/** `command` as the leader of a new process group, ended with the bench at the latest. */
export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  killOpenGroupsOnExit();
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid !== undefined) open.add(child.pid);
  return child;
}

/** Stops the leader as stopChild does (SIGTERM, SIGKILL after 10 s), then kills what is left of its group. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  await stopChild(child);
  if (child.pid === undefined) return;
  killGroup(child.pid);
  open.delete(child.pid);
}
