import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/config/paths.js';

/** The fenced blocks of one language in a project document, optionally only under one heading. */
export function fencedBlocks(file: string, language: string, heading?: string): string[] {
  let text = readFileSync(path.join(projectRoot, file), 'utf8');
  if (heading) {
    const start = text.indexOf(`\n${heading}\n`);
    if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
    const next = text.indexOf('\n## ', start + heading.length + 2);
    text = text.slice(start, next < 0 ? undefined : next);
  }
  const blocks: string[] = [];
  const fence = new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g');
  for (const match of text.matchAll(fence)) blocks.push(match[1] ?? '');
  return blocks;
}
