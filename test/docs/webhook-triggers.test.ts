import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { startTestService, type TestService } from '../support/harness.js';

const doc = readFileSync(path.join(import.meta.dirname, '../../docs/webhook-triggers.md'), 'utf8');

/** Runs a script in bash (asynchronously: the service answering its requests lives in this process). */
function bash(script: string, options: { cwd: string; env: Record<string, string | undefined> }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The ```sh blocks of the doc's walk-through, in order. */
function walkThrough(): string[] {
  const section = doc.slice(doc.indexOf('## Walk-through'));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

let svc: TestService;
let workflowId: string;
beforeAll(async () => {
  svc = await startTestService();
  const g = new Graph();
  const fields = [{ name: 'title' }, { name: 'event', optional: true }];
  g.edge(g.input(fields), g.output(fields));
  workflowId = (await createWorkflow(svc, g, 'walk-through')).workflowId;
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/webhook-triggers.md', () => {
  it('runs the walk-through as written, with the outputs it shows', { timeout: 120_000 }, async () => {
    const blocks = walkThrough();
    expect(blocks.length).toBe(10);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hooks-doc-'));
    try {
      const run = await bash(['set -euo pipefail', ...blocks].join('\n'), {
        cwd: dir,
        env: { PATH: process.env.PATH, CASEFLOW_URL: svc.url, CASEFLOW_KEY: svc.key, WORKFLOW_ID: workflowId },
      });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const out = run.stdout;
      for (const shown of [
        'forged: 401',
        '{"status":"COMPLETED","title":"Fix the login page","event":"pull_request"}',
        '{"status":"COMPLETED","results":{"title":{"value":"From a signed sender"',
        'stripe: RUNNING',
        'enabled: false',
        'disabled: 404',
        'other body: 409',
      ])
        expect(out).toContain(shown);
      expect(out).toMatch(/\{"source":"api","hookId":"[0-9a-f-]{36}"\}/);
      expect(out).toMatch(/rotated; old secret valid until \d{4}-/);
      expect(out).toMatch(/one case: [0-9a-f-]{36}/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
