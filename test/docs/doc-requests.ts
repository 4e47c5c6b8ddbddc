import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TestResponse, TestService } from '../support/harness.js';

/** One request of a doc's walk-through, with the documented answer's shape when the doc shows one. */
export interface Step {
  method: string;
  path: string;
  body?: unknown;
  documented?: Record<string, unknown>;
}

/** The ```http requests of a doc under docs/, in order, each with the ```json response block that follows it. */
export function walkThrough(doc: string): Step[] {
  const markdown = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), 'utf8');
  const steps: Step[] = [];
  for (const block of markdown.matchAll(/```(http|json response)\n([\s\S]*?)```/g)) {
    const [, kind, text = ''] = block;
    if (kind === 'json response') {
      const last = steps.at(-1);
      if (last) last.documented = JSON.parse(text.replace(/…/g, '')) as Record<string, unknown>;
      continue;
    }
    const [requestLine = '', ...rest] = text.split('\n');
    const [method = '', path = ''] = requestLine.split(' ');
    const body = rest.join('\n').trim();
    steps.push({ method, path, ...(body ? { body: JSON.parse(body) as unknown } : {}) });
  }
  return steps;
}

/** Replaces each `{{name}}` with its value (left as is when there is none yet). */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => values[name] ?? `{{${name}}}`);
}

/**
 * Sends the steps in order (`/admin/` paths with the admin token, the rest with the service's key),
 * each answer's keys checked against the documented response where the doc shows one; the answers.
 */
export async function sendSteps(
  svc: TestService,
  steps: Step[],
  values: Record<string, string>,
): Promise<TestResponse[]> {
  const answers: TestResponse[] = [];
  for (const step of steps) {
    const path = fill(step.path, values);
    const answer = path.startsWith('/admin/')
      ? await svc.admin(step.method, path, step.body)
      : await svc.request(step.method, path, step.body === undefined ? {} : { body: step.body });
    if (step.documented) expect(Object.keys(answer.body).sort()).toEqual(Object.keys(step.documented).sort());
    answers.push(answer);
  }
  return answers;
}
