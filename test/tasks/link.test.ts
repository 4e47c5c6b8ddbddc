import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { launchChromium } from '../connections/oauth-support.js';
import { newKey } from '../support/keys.js';
import { startTestService, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';

/** A person without an API key completes a task through its link, in a real browser. */
let svc: TestService;
let browser: Browser;
let workflowId: string;

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService(), launchChromium()]);
  const { graph } = approvalGraph({
    title: 'Approve {{ amount }} EUR',
    instructions: 'Pay {{ amount }} EUR <now>?',
    assignee: { type: 'workspace' },
  });
  ({ workflowId } = await createWorkflow(svc, graph, 'approval by link'));
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function openTask(amount: number): Promise<{ caseId: string; taskId: string }> {
  const caseId = await startCase(svc, workflowId, { amount });
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    const list = await svc.request('GET', `/api/v1/tasks?caseId=${caseId}`);
    const taskId = (list.body.items as Array<{ taskId: string }>)[0]?.taskId;
    if (taskId) return { caseId, taskId };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no task');
}

describe('completion link', () => {
  it('shows the form built from the form schema, refuses a bad answer on the page, takes a good one once', async () => {
    const { caseId, taskId } = await openTask(42);
    const reader = await newKey(svc, ['case:read']);
    expect((await svc.request('POST', `/api/v1/tasks/${taskId}/link`, { key: reader.key })).status).toBe(403);
    const created = await svc.request('POST', `/api/v1/tasks/${taskId}/link`);
    expect(created.status, created.text).toBe(201);
    const url = String(created.body.url);
    expect(url).toMatch(/\/api\/v1\/task-links\/[\w-]{43}$/);
    const token = url.split('/').at(-1) ?? '';
    // Only the hash is kept: the token is nowhere in the task's answer.
    expect((await svc.request('GET', `/api/v1/tasks/${taskId}`)).text).not.toContain(token);

    const page = await browser.newPage();
    try {
      await page.goto(url);
      const body = page.locator('body');
      expect(await body.getAttribute('data-outcome')).toBe('form');
      expect(await page.locator('h1').innerText()).toBe('Approve 42 EUR');
      expect(await page.locator('.instructions').innerText()).toBe('Pay 42 EUR <now>?');

      // Nothing chosen: the page says which field is missing, and nothing changes.
      await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
      expect(await page.locator('[data-error=approved]').innerText()).toBe('is required');
      expect((await svc.request('GET', `/api/v1/tasks/${taskId}`)).body.status).toBe('open');

      await page.check('input[name=approved][value=true]');
      await page.fill('input[name=note]', 'ok by mail');
      await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
      expect(await body.getAttribute('data-outcome')).toBe('done');
      expect(await body.innerText()).toContain('Thank you');

      // Single use: the same link now says the task is decided.
      const again = await page.goto(url);
      expect(again?.status()).toBe(410);
      expect(await body.getAttribute('data-outcome')).toBe('closed');
    } finally {
      await page.close();
    }
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const task = await svc.request('GET', `/api/v1/tasks/${taskId}`);
    expect(task.body).toMatchObject({ status: 'completed', decidedVia: 'link', decidedBy: null });
    expect(task.body.outputs).toEqual({ approved: true, note: 'ok by mail' });
  });

  it('answers a link it never gave out with a clear page, never a stack trace', async () => {
    const page = await browser.newPage();
    try {
      const answer = await page.goto(`${svc.url}/api/v1/task-links/not-a-token`);
      expect(answer?.status()).toBe(400);
      expect(await page.locator('body').getAttribute('data-outcome')).toBe('invalid');
      expect(await page.locator('h1').innerText()).toBe('Invalid link');
    } finally {
      await page.close();
    }
    const posted = await fetch(`${svc.url}/api/v1/task-links/not-a-token`, {
      method: 'POST',
      body: new URLSearchParams({ approved: 'true' }),
    });
    expect(posted.status).toBe(400);
    expect(await posted.text()).toContain('Invalid link');
  });
});
