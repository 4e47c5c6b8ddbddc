import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { http, startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { ended, waitForSchedule, type ScheduleBody } from '../schedules/support.js';

/** One curl call of the page, its shell words expanded with the walk-through's variables. */
interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Splits a command into shell words: single quotes literal, double quotes and bare words expand $NAME. */
function shellWords(command: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] ?? '';
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word = (word ?? '') + c;
    } else if (c === '$' && /[A-Z_]/.test(command[i + 1] ?? '')) {
      const name = /^[A-Z_]+/.exec(command.slice(i + 1))?.[0] ?? '';
      const value = vars[name];
      if (value === undefined) throw new Error(`the walk-through uses $${name}, which it never set`);
      word = (word ?? '') + value;
      i += name.length;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else word = (word ?? '') + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

function curlCall(words: string[]): Call {
  expect(words[0]).toBe('curl');
  const call: Call = { method: 'GET', url: '', headers: {} };
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? '';
    const next = () => words[++i] ?? '';
    if (word === '-s') continue;
    if (word === '-X') call.method = next();
    else if (word === '-H') {
      const [name = '', ...value] = next().split(':');
      call.headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (word === '-d') call.body = next();
    else call.url = word;
  }
  return call;
}

/** The page's sh blocks in order, continuation lines joined. */
function shBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').replace(/\\\n\s*/g, ' '));
}

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/triggers.md', () => {
  it('runs its walk-through as written', async () => {
    const { workflowId } = await createWorkflow(
      svc,
      textChain('Echo', py('return {"text": "echo:" + inputs["text"]}')),
    );
    const vars: Record<string, string> = { CASEFLOW: svc.url, KEY: svc.key, WORKFLOW_ID: workflowId };
    const markdown = readFileSync(`${projectRoot}/docs/triggers.md`, 'utf8');
    const answers: Array<{ call: Call; r: TestResponse }> = [];
    for (const block of shBlocks(markdown)) {
      for (const line of block.split('\n').filter((l) => l.trim() !== '')) {
        const assignment = /^([A-Z_]+)=/.exec(line);
        if (assignment?.[1] === 'START_AT') {
          // What the page's `date` computes: ten minutes from now, to the second.
          vars.START_AT = new Date(Date.now() + 600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
          continue;
        }
        const call = curlCall(shellWords(line, vars));
        const r = await http(call.url, call.method, {
          key: null,
          headers: call.headers,
          ...(call.body !== undefined ? { rawBody: call.body } : {}),
        });
        expect(r.status, `${call.method} ${call.url}: ${r.text}`).toBeLessThan(300);
        answers.push({ call, r });
        if (typeof r.body.scheduleId === 'string') vars.SCHEDULE_ID = r.body.scheduleId;
        if (typeof r.body.caseId === 'string') vars.CASE_ID = r.body.caseId;
        // The trigger's case runs before the walk-through goes on, as a reader would wait for it.
        if (call.url.endsWith('/trigger'))
          await waitForSchedule(svc, vars.SCHEDULE_ID ?? '', (s) => s.recentFirings.some(ended));
      }
    }
    const step = (method: string, suffix: RegExp) => {
      const found = answers.find((a) => a.call.method === method && suffix.test(new URL(a.call.url).pathname));
      if (!found) throw new Error(`the walk-through has no ${method} ${String(suffix)}`);
      return found.r;
    };
    const created = step('POST', /\/schedules$/);
    expect(created.status).toBe(201);
    expect((created.body as ScheduleBody).nextRunTimes.length).toBeGreaterThan(0);
    expect(step('POST', /\/pause$/).body).toMatchObject({ paused: true });
    expect(step('PATCH', /\/schedules\/[^/]+$/).body).toMatchObject({ intervalSeconds: 3600, overlap: 'buffer_one' });
    expect(step('POST', /\/backfill$/).body).toMatchObject({ firings: 3 });
    expect(step('GET', /\/schedules$/).body.items).toHaveLength(1);
    expect(step('DELETE', /\/schedules\/[^/]+$/).status).toBe(204);
    expect(step('POST', /\/execute$/).body).toMatchObject({
      status: 'RUNNING',
      startAt: vars.START_AT?.replace('Z', '.000Z'),
    });
    expect(step('GET', /\/status$/).body).toMatchObject({ status: 'RUNNING', runningNodes: [] });
    expect(step('POST', /\/cancel$/).body).toMatchObject({ status: 'CANCELLED' });
  });
});
