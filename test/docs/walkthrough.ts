import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import type { TestResponse, TestService } from '../support/harness.js';

/**
 * Runs a doc's walk-through, so the doc cannot rot. In the given section of a docs/ page, each
 * ```` ```http ```` block is a request (`METHOD /path`, header lines, a blank line, a JSON body), sent in
 * order with the service's key; ` as=name` keeps its answer for later `{name.path.to.field}`
 * placeholders (`{workspaceId}` is the service's). The ```` ```json <status> ```` block after it is the
 * answer: that status (a 202 before it is polled again, for answers that wait for a case to end)
 * and a body containing that JSON.
 */
export interface Step {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  as?: string;
  status: number;
  expected: string;
}

const fence = /```(http|json)([^\n]*)\n([\s\S]*?)```/g;

/** The steps of the walk-through in `section` (a `## ` heading) of docs/`page`. */
export function walkthrough(page: string, section: string): Step[] {
  const doc = readFileSync(path.join(projectRoot, 'docs', page), 'utf8');
  const start = doc.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`docs/${page} has no section ${section}`);
  const end = doc.indexOf('\n## ', start + 1);
  const text = doc.slice(start, end < 0 ? undefined : end);
  const steps: Step[] = [];
  let pending: Omit<Step, 'status' | 'expected'> | undefined;
  for (const [, lang, info, content] of text.matchAll(fence)) {
    if (lang === 'http') {
      if (pending) throw new Error(`request ${pending.method} ${pending.path} has no answer block`);
      const [head, body] = (content ?? '').split(/\n\n/, 2) as [string, string | undefined];
      const [requestLine = '', ...headerLines] = head.split('\n').filter((line) => line.trim() !== '');
      const [method = '', target = ''] = requestLine.split(' ');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      pending = {
        method,
        path: target,
        headers,
        body: body?.trim() || undefined,
        as: /as=(\w+)/.exec(info ?? '')?.[1],
      };
    } else if (pending) {
      steps.push({ ...pending, status: Number((info ?? '').trim()), expected: content ?? '' });
      pending = undefined;
    }
  }
  if (pending) throw new Error(`request ${pending.method} ${pending.path} has no answer block`);
  return steps;
}

function lookup(values: Record<string, unknown>, name: string): string {
  let value: unknown = values;
  for (const part of name.split('.')) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (typeof value !== 'string') throw new Error(`placeholder {${name}} has no value`);
  return value;
}

/** Placeholders `{name.path}` (a letter first, so JSON's own braces are left alone) filled in. */
function fill(text: string, values: Record<string, unknown>): string {
  return text.replace(/\{([A-Za-z][\w.-]*)\}/g, (_, name: string) => lookup(values, name));
}

/** Sends the steps in order and checks each answer; the answers kept by name. */
export async function runWalkthrough(svc: TestService, steps: Step[]): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = { workspaceId: svc.workspaceId };
  for (const step of steps) {
    const send = () =>
      svc.request(step.method, fill(step.path, values), {
        headers: Object.fromEntries(Object.entries(step.headers).map(([k, v]) => [k, fill(v, values)])),
        ...(step.body ? { body: JSON.parse(fill(step.body, values)) as unknown } : {}),
      });
    let answer: TestResponse = await send();
    for (const until = Date.now() + 30_000; answer.status === 202 && step.status !== 202 && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send();
    }
    const label = `${step.method} ${step.path}`;
    expect(answer.status, `${label}: ${answer.text}`).toBe(step.status);
    expect(answer.body, label).toMatchObject(JSON.parse(fill(step.expected, values)) as Record<string, unknown>);
    if (step.as) values[step.as] = answer.body;
  }
  return values;
}
