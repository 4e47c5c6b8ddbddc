import { readFileSync } from 'node:fs';

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
