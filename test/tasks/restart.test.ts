import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { startTestService, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';

/**
 * A case waiting on a person outlives its worker: the worker (the built CLI,
 * its own process) is killed with SIGKILL while the case waits, another one
 * starts, and the task is completed through the API-only service.
 */
let svc: TestService;
const workers: ChildProcess[] = [];

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/src/cli/main.js'), 'serve', '--role', 'worker'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      CASEFLOW_DATA_DIR: svc.dataDir,
      CASEFLOW_TASK_QUEUE: svc.taskQueue,
      CASEFLOW_WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workers.push(child);
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

beforeAll(async () => {
  svc = await startTestService({ role: 'api' });
});
afterAll(async () => {
  for (const w of workers) {
    if (w.exitCode === null && w.signalCode === null) {
      w.kill('SIGTERM');
      await exited(w);
    }
  }
  await svc?.stop();
});

describe('a waiting case across a worker crash', () => {
  it('keeps its task completable after SIGKILL and finishes on the next worker', async () => {
    const { graph } = approvalGraph({ title: 'Approve {{ amount }}', assignee: { type: 'workspace' } });
    const { workflowId } = await createWorkflow(svc, graph, 'approval across a crash');
    const first = startWorker();
    const caseId = await startCase(svc, workflowId, { amount: 7 });
    let taskId: string | undefined;
    for (const until = Date.now() + 60_000; !taskId && Date.now() < until;) {
      const list = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}&status=open`);
      taskId = (list.body.items as Array<{ taskId: string }>)[0]?.taskId;
      if (!taskId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taskId).toBeDefined();

    first.kill('SIGKILL');
    await exited(first);
    startWorker();
    const done = await svc.request('POST', `/api/v1/tasks/${String(taskId)}/complete`, {
      body: { outputs: { approved: true, note: 'after the crash' } },
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('completed');
    expect((await waitForEnd(svc, caseId, 60_000)).status).toBe('COMPLETED');
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expect(results.body.results).toMatchObject({ approved: { value: true }, note: { value: 'after the crash' } });
  });
});
