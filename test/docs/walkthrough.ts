import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import type { TestResponse, TestService } from '../support/harness.js';

/**
 * The one reader of docs' request blocks, so a doc's walk-through is run as written and cannot rot. In a
 * docs/ page (or one `## ` section of it), each ```` ```http ```` block is a request (`METHOD /path`, header
 * lines, a blank line, a JSON body) with `{name.path}` placeholders; ` as=name` keeps its answer for later
 * placeholders. A ```` ```json <info> ```` block after it is the documented answer: `json 201` gives the
 * status (and a body the answer must contain) for runWalkthrough, `json response` only its shape.
 */
export interface Step {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  as?: string;
  /** The status of a ```` ```json <status> ```` answer block. */
  status?: number;
  /** The text of the answer block. */
  expected?: string;
}

const fence = /```(http|json)([^\n]*)\n([\s\S]*?)```/g;

/** The requests of docs/`page`, or of its `section` (a `## ` heading), in order. */
export function walkthrough(page: string, section?: string): Step[] {
  let text = readFileSync(path.join(projectRoot, 'docs', page), 'utf8');
  if (section !== undefined) {
    const start = text.indexOf(`\n## ${section}\n`);
    if (start < 0) throw new Error(`docs/${page} has no section ${section}`);
    const end = text.indexOf('\n## ', start + 1);
    text = text.slice(start, end < 0 ? undefined : end);
  }
  const steps: Step[] = [];
  let last: Step | undefined;
  for (const [, lang, info = '', content = ''] of text.matchAll(fence)) {
    if (lang === 'http') {
      const [head, body] = content.split(/\n\n/, 2) as [string, string | undefined];
      const [requestLine = '', ...headerLines] = head.split('\n').filter((line) => line.trim() !== '');
      const [method = '', target = ''] = requestLine.split(' ');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      last = { method, path: target, headers, body: body?.trim() || undefined, as: /as=(\w+)/.exec(info)?.[1] };
      steps.push(last);
    } else if (last) {
      const status = Number(info.trim());
      Object.assign(last, { expected: content, ...(Number.isInteger(status) && status > 0 ? { status } : {}) });
      last = undefined;
    }
  }
  return steps;
}

/** The top-level fields of a step's documented answer (`…` stands for elided values). */
export function documentedFields(step: Step): string[] | undefined {
  if (step.expected === undefined) return undefined;
  return Object.keys(JSON.parse(step.expected.replace(/…/g, '')) as Record<string, unknown>).sort();
}

function lookup(values: Record<string, unknown>, name: string): string {
  let value: unknown = values;
  for (const part of name.split('.')) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (typeof value !== 'string') throw new Error(`placeholder {${name}} has no value`);
  return value;
}

/** Placeholders `{name.path}` (a letter first, so JSON's own braces and `{{ name }}` templates are left alone) filled in. */
export function fill(text: string, values: Record<string, unknown>): string {
  return text.replace(/\{([A-Za-z][\w.-]*)\}/g, (_, name: string) => lookup(values, name));
}

/**
 * Sends the steps in order (`/admin/` paths with the admin token, the rest with the service's key; raw
 * requests, as the method, path and body are the doc's text), each
 * answer's fields checked against the documented answer where the doc shows one; the answers.
 */
export async function sendSteps(
  svc: TestService,
  steps: Step[],
  values: Record<string, unknown>,
): Promise<TestResponse[]> {
  const answers: TestResponse[] = [];
  for (const step of steps) {
    const path = fill(step.path, values);
    const body = step.body === undefined ? undefined : (JSON.parse(fill(step.body, values)) as unknown);
    const answer = path.startsWith('/admin/')
      ? await svc.admin(step.method, path, body)
      : await svc.request(step.method, path, body === undefined ? {} : { body });
    const documented = documentedFields(step);
    if (documented) expect(Object.keys(answer.body).sort(), `${step.method} ${path}`).toEqual(documented);
    answers.push(answer);
  }
  return answers;
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
    if (step.status === undefined || step.expected === undefined)
      throw new Error(`${label} has no json <status> block`);
    expect(answer.status, `${label}: ${answer.text}`).toBe(step.status);
    expect(answer.body, label).toMatchObject(JSON.parse(fill(step.expected, values)) as Record<string, unknown>);
    if (step.as) values[step.as] = answer.body;
  }
  return values;
}
