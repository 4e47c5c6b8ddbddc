import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, answered, startTestService, type TestService } from '../support/harness.js';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const st = path.join(projectRoot, '.venv/bin/st');

/** Runs the CLI to its end; its output is returned whole so a failure shows schemathesis' own report. */
function runSchemathesis(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(st, ['--config-file', path.join(import.meta.dirname, 'schemathesis.toml'), ...args], {
      cwd: import.meta.dirname,
      env: { ...process.env, ...env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the OpenAPI document against the running service (schemathesis)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    // The stateful phase creates schedules, and Temporal Schedules outlive the service: none is left firing.
    for (;;) {
      const { items } = await answered(svc.client.GET('/api/v1/schedules', { params: { query: { limit: 100 } } }), 200);
      if (items.length === 0) break;
      for (const { scheduleId } of items)
        await svc.client.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
    }
    await svc.stop();
  });

  // Every check runs by default (schemathesis.toml turns a few off per operation); `--checks all` would override those.
  it('finds no failure with every check on, the stateful phase included', { timeout: 15 * 60_000 }, async () => {
    expect(existsSync(st), `${st} is missing: run scripts/setup.sh`).toBe(true);
    const { code, output } = await runSchemathesis(
      [
        'run',
        `${svc.url}/openapi.json`,
        '--header',
        `x-service-key: ${svc.key}`,
        '--phases',
        'examples,coverage,fuzzing,stateful',
        '--max-examples',
        process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '25',
        // One worker: schemathesis' workers are threads, and two parsing Python source at once (hypothesis
        // describing a lambda) trip CPython 3.11's AST recursion counter ("AST constructor recursion depth
        // mismatch"), a runtime error of the tool that failed the run now and then.
        '--workers',
        '1',
        '--seed',
        '1',
      ],
      { CASEFLOW_WORKSPACE_ID: svc.workspaceId, CASEFLOW_ADMIN_TOKEN: adminToken },
    );
    expect(code, output).toBe(0);
  });
});
