import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/config/paths.js';
import type { TestService } from '../support/harness.js';

/**
 * Examples that need more than `case run --wait` (a person, a schedule, a sender: capabilities.test.ts drives them; a
 * connection to a local service: integration-example.test.ts).
 */
export const commandExamples = ['human-task.yaml', 'schedule.yaml', 'webhook.yaml', 'integration-action.yaml'];

export const cliPath = path.join(projectRoot, 'dist/src/cli/main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment a user of the CLI has against `svc`: its URL and key, and a config file of their own. */
export function cliEnv(svc: TestService, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: mkdtempSync(path.join(os.tmpdir(), 'caseflow-cli-home-')),
    CASEFLOW_URL: svc.url,
    CASEFLOW_API_KEY: svc.key,
    ...extra,
  };
}

/** Runs `caseflow …` as a child process (asynchronously: the service answers from this process). */
export function cli(args: string[], env: NodeJS.ProcessEnv, cwd = projectRoot): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...args], { env, cwd, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err && typeof err.code === 'number' ? err.code : err ? -1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `caseflow …` in a pseudo-terminal (util-linux `script`), as a person at a terminal would: what the
 * screen shows, control sequences included.
 */
export function terminal(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const command = [process.execPath, cliPath, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-qfec', command, '/dev/null'],
      { env: { ...env, TERM: 'xterm', COLUMNS: '100' }, cwd: projectRoot, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? -1 : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
