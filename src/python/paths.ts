import { chmod, copyFile, mkdir, mkdtemp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RUNNER_FILES = [
  'runner_server.py',
  'sandbox_os.py',
  'policy.py',
  'harness.py',
  'scan.py',
  'egress.py',
  'hardening.py',
] as const;

const here = dirname(fileURLToPath(import.meta.url));

/** Finds `rel` next to this module or, when compiled to dist/, in the project tree above it. */
export function findProjectFile(rel: string): string {
  let dir = here;
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, rel);
    if (existsSync(candidate)) return candidate;
    dir = resolve(dir, '..');
  }
  throw new Error(`caseflow python runner: cannot find ${rel} above ${here}`);
}

/**
 * Copies the Python runner into a fresh world-readable directory: the servers
 * run as an unprivileged uid that may not be able to read the project tree,
 * and bwrap binds the copy read-only at /runner.
 */
export async function stageRunner(): Promise<string> {
  const source = dirname(findProjectFile('src/python/runner_server.py'));
  const dir = await mkdtemp(join(tmpdir(), 'caseflow-python-'));
  await chmod(dir, 0o755);
  for (const file of RUNNER_FILES) {
    await copyFile(join(source, file), join(dir, file));
    await chmod(join(dir, file), 0o644);
  }
  return dir;
}

/**
 * Where unsandboxed servers make their scratch slots (no bwrap tmpfs mounts there): inside the
 * staged runner dir, so closing the pool removes them even after a server was killed. Sticky and
 * writable by all: the servers may run as another uid than Node.
 */
export async function stageScratch(runnerDir: string): Promise<string> {
  const dir = join(runnerDir, 'scratch');
  await mkdir(dir);
  await chmod(dir, 0o1733);
  return dir;
}
