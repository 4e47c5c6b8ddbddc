import { lstatSync, readlinkSync } from 'node:fs';

export interface LaunchSpec {
  command: string;
  args: string[];
  uid?: number;
  gid?: number;
  sandboxed: boolean;
}

export interface LaunchOptions {
  runnerDir: string;
  pythonPath: string;
  bwrapPath: string;
  network: boolean;
  sandboxed: boolean;
  /** Directory of the egress proxy's socket, bound at /egress for network servers. */
  egressDir: string;
  /** Calls a server runs at once: each gets a scratch tmpfs of its own. */
  scratchSlots: number;
  /** Size of each call's scratch tmpfs. */
  scratchMb: number;
  uid?: number;
  gid?: number;
}

/** Where a sandboxed network server finds the egress proxy. */
export const SANDBOX_EGRESS_DIR = '/egress';

/** Slot k of a sandboxed server's scratch space is the tmpfs at `${SANDBOX_SCRATCH_PREFIX}${k}`. */
export const SANDBOX_SCRATCH_PREFIX = '/tmp/scratch-';

/** /tmp itself only holds the scratch mount points: nothing but the server may write to it. */
const TMP_BYTES = 1024 * 1024;

/**
 * One size-limited tmpfs per call slot: a call filling its scratch gets ENOSPC at its own
 * limit and never takes space from another call; the server empties a slot when its call ends.
 */
function scratchMounts(slots: number, mb: number): string[] {
  return Array.from({ length: slots }, (_, k) => [
    '--size',
    String(mb * 1024 * 1024),
    '--tmpfs',
    `${SANDBOX_SCRATCH_PREFIX}${k}`,
  ]).flat();
}

const PYTHON_ARGS = ['-I', '-S', '-B'];

/** /bin, /lib... are symlinks into /usr on merged-/usr hosts; mirror what the host has. */
function topLevelLinks(): string[] {
  const args: string[] = [];
  for (const path of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
      else if (st.isDirectory()) args.push('--ro-bind', path, path);
    } catch {
      // absent on this host
    }
  }
  return args;
}

/**
 * bwrap: every namespace new (the network one too: no interface but an
 * unused loopback), empty environment, read-only /usr and libraries, only the
 * /etc files Python needs, a tmpfs per call slot for scratch space (under a
 * tiny /tmp), and the runner read-only at /runner. Network servers also get the CA bundle and the
 * egress proxy's socket directory at /egress, their only way out. The Python
 * server adds Landlock and seccomp per child.
 */
export function buildLaunch(o: LaunchOptions): LaunchSpec {
  const script = `${o.runnerDir}/runner_server.py`;
  if (!o.sandboxed) {
    return { command: o.pythonPath, args: [...PYTHON_ARGS, script], uid: o.uid, gid: o.gid, sandboxed: false };
  }
  const etc = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/localtime'];
  if (o.network) etc.push('/etc/ssl', '/etc/ca-certificates');
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--setenv',
    'LC_ALL',
    'C.UTF-8',
    '--cap-drop',
    'ALL',
    '--hostname',
    'caseflow-sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
    ...topLevelLinks(),
    ...etc.flatMap((p) => ['--ro-bind-try', p, p]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(TMP_BYTES),
    '--tmpfs',
    '/tmp',
    ...scratchMounts(o.scratchSlots, o.scratchMb),
    '--ro-bind',
    o.runnerDir,
    '/runner',
    ...(o.network ? ['--ro-bind', o.egressDir, SANDBOX_EGRESS_DIR] : []),
    '--chdir',
    '/tmp',
    o.pythonPath,
    ...PYTHON_ARGS,
    '/runner/runner_server.py',
  ];
  return { command: o.bwrapPath, args, uid: o.uid, gid: o.gid, sandboxed: true };
}
