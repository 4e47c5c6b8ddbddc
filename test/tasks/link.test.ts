import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { launchChromium } from '../connections/oauth-support.js';
import { createClient } from '../../src/client/index.js';
import { newKey } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { approvalGraph } from './graphs.js';
import { completeTask, getTask, taskOf } from './support.js';

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

async function openTask(
  amount: number,
  inputs: Record<string, unknown> = {},
  workflow = workflowId,
): Promise<{ caseId: string; taskId: string }> {
  const caseId = await startCase(svc, workflow, { amount, ...inputs });
  return { caseId, taskId: (await taskOf(svc, caseId)).taskId };
}

const link = (taskId: string, client = svc.client) =>
  client.POST('/api/v1/tasks/{taskId}/link', { params: { path: { taskId } } });
const task = (taskId: string) => answered(getTask(svc, taskId), 200);

/** A page of ours, never the server's error output. */
async function expectClearPage(page: Page, outcome: string, heading: string): Promise<void> {
  expect(await page.locator('body').getAttribute('data-outcome')).toBe(outcome);
  expect(await page.locator('h1').innerText()).toBe(heading);
  expect(await page.content()).not.toMatch(/Error|\bat .+:\d+:\d+/);
}

async function createLink(taskId: string): Promise<string> {
  return (await answered(link(taskId), 201)).url;
}

describe('completion link', () => {
  it('shows the form built from the form schema, refuses a bad answer on the page, takes a good one once', async () => {
    const { caseId, taskId } = await openTask(42);
    const reader = await newKey(svc, ['case:read']);
    expect((await link(taskId, createClient({ baseUrl: svc.url, key: reader.key }))).response.status).toBe(403);
    const url = await createLink(taskId);
    expect(url).toMatch(/\/api\/v1\/task-links\/[\w-]{43}$/);
    const token = url.split('/').at(-1) ?? '';
    // Only the hash is kept: the token is nowhere in the task's answer.
    expect(JSON.stringify(await task(taskId))).not.toContain(token);

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
      expect((await task(taskId)).status).toBe('open');

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
    const decided = await task(taskId);
    expect(decided).toMatchObject({ status: 'completed', decidedVia: 'link', decidedBy: null });
    expect(decided.outputs).toEqual({ approved: true, note: 'ok by mail' });
  });

  it("offers a field's options as a choice list, fills in defaults, and sends a blank field that may be null as null", async () => {
    const { graph } = approvalGraph({ title: 'Rate {{ amount }}', assignee: { type: 'workspace' } }, {}, [
      {
        id: 'priority',
        variable_name: 'priority',
        allowed_types: [{ type: 'str' }],
        default: 'normal',
        tags: [{ variable_name: 'options', value: ['low', 'normal', 'high'] }],
      },
      { id: 'budget', variable_name: 'budget', allowed_types: [{ type: 'float' }], default: 10 },
      { id: 'comment', variable_name: 'comment', allowed_types: [{ type: 'str' }], is_nullable: true },
    ]);
    const { workflowId: rated } = await createWorkflow(svc, graph, 'approval with choices');
    const { caseId, taskId } = await openTask(3, {}, rated);
    // Through the API too, a value that is not one of the options is refused, naming the field.
    const wrong = await completeTask(svc, taskId, { approved: true, priority: 'urgent', comment: null });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error?.metadata).toMatchObject({
      fields: [{ field: 'body.outputs.priority', message: 'must be one of "low", "normal", "high"' }],
    });

    const page = await browser.newPage();
    try {
      await page.goto(await createLink(taskId));
      const priority = page.locator('select[name=priority]');
      expect(await priority.locator('option').allInnerTexts()).toEqual(['—', 'low', 'normal', 'high']);
      expect(await priority.inputValue()).toBe('normal');
      expect(await page.locator('input[name=budget]').inputValue()).toBe('10');
      await page.check('input[name=approved][value=true]');
      await priority.selectOption('high');
      await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
      expect(await page.locator('body').getAttribute('data-outcome')).toBe('done');
    } finally {
      await page.close();
    }
    expect((await task(taskId)).outputs).toEqual({
      approved: true,
      note: null,
      priority: 'high',
      budget: 10,
      comment: null,
    });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
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

  it('answers a used link with the "Already decided" page, also to the form sent from a second tab', async () => {
    const { caseId, taskId } = await openTask(5);
    const url = await createLink(taskId);
    // The link opened twice (say, from the mail and again later): both tabs show the form.
    const [first, second] = await Promise.all([browser.newPage(), browser.newPage()]);
    try {
      for (const tab of [first, second]) {
        await tab.goto(url);
        expect(await tab.locator('body').getAttribute('data-outcome')).toBe('form');
      }
      await first.check('input[name=approved][value=false]');
      await first.fill('input[name=note]', 'first answer');
      await Promise.all([first.waitForLoadState(), first.click('button[type=submit]')]);
      expect(await first.locator('body').getAttribute('data-outcome')).toBe('done');

      await second.check('input[name=approved][value=true]');
      await second.fill('input[name=note]', 'second answer');
      const [again] = await Promise.all([
        second.waitForResponse((r) => r.url() === url && r.request().method() === 'POST'),
        second.click('button[type=submit]'),
      ]);
      expect(again.status()).toBe(410);
      await second.waitForLoadState();
      await expectClearPage(second, 'closed', 'Already decided');

      // Back to the form in the first tab: the page is not kept (no-store), it is asked for again and says so.
      await first.goBack();
      await expectClearPage(first, 'closed', 'Already decided');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect(await task(taskId)).toMatchObject({
      status: 'completed',
      outputs: { approved: false, note: 'first answer' },
    });
  });

  it('answers a link past the task\'s due time with the "Link expired" page while the task goes on', async () => {
    // The shortest due duration is a minute; a due time from a date input (today, plus an offset) can be seconds away.
    const today = new Date().toISOString().slice(0, 10);
    const dueInMs = 6_000;
    const { graph } = approvalGraph({
      title: 'Approve {{ amount }} EUR today',
      assignee: { type: 'workspace' },
      due: { input: 'deadline', offset_ms: Date.now() + dueInMs - Date.parse(today) },
      on_due: { action: 'escalate', assignee: { type: 'role', role: 'owner' } },
    });
    const { workflowId: dueToday } = await createWorkflow(svc, graph, 'approval due in seconds');
    const { caseId, taskId } = await openTask(9, { deadline: today }, dueToday);
    const url = await createLink(taskId);
    for (const until = Date.now() + dueInMs + 30_000; Date.now() < until;) {
      if ((await task(taskId)).escalated) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // Escalated, not closed: the task still waits for its new assignee, but the link expired with the due time.
    expect(await task(taskId)).toMatchObject({
      status: 'open',
      escalated: true,
    });

    const page = await browser.newPage();
    try {
      const answer = await page.goto(url);
      expect(answer?.status()).toBe(410);
      await expectClearPage(page, 'expired', 'Link expired');
    } finally {
      await page.close();
    }
    const posted = await fetch(url, { method: 'POST', body: new URLSearchParams({ approved: 'true' }) });
    expect(posted.status).toBe(410);
    expect(await posted.text()).toContain('Link expired');
    expect((await task(taskId)).status).toBe('open');

    await answered(completeTask(svc, taskId, { approved: true }), 200);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
  });
});
