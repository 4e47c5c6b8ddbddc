import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config/paths.js';

/** The prompt version each agent uses (files in src/generation/prompts/, see its README). */
export const promptVersions = {
  triage: 'triage.v1',
  architect: 'architect.v3',
  builder: 'builder.v3',
  /** Appended to the architect's when the run builds from a discovered process. */
  processArchitect: 'process-architect.v3',
} as const;
export type AgentName = keyof typeof promptVersions;

const cache = new Map<string, string>();

/** An agent's system prompt, read once from its versioned file. */
export function systemPrompt(agent: AgentName): string {
  const name = promptVersions[agent];
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(path.join(projectRoot, 'src', 'generation', 'prompts', `${name}.md`), 'utf8');
    cache.set(name, text);
  }
  return text;
}
