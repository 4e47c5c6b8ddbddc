import { variableTypes, type VariableType } from '../domain/vocabulary.js';
import type { AfterEntry } from './format.js';

/** The keys that say what a node runs; exactly one per node. */
export const kindKeys = ['python', 'python_file', 'code', 'condition', 'action', 'agent', 'call', 'kind'] as const;

/** The node type of each handler class the format writes the short way. */
export const nodeTypes = {
  python_code: 'code',
  condition: 'condition',
  integration_action: 'action',
  llm_agent: 'agent',
  call_workflow: 'subworkflow',
} as const;

const typeNames: ReadonlySet<string> = new Set(variableTypes);
export function isTypeName(text: string): text is VariableType {
  return typeNames.has(text);
}

/** `fetch`, `{ check: large }` or `{ check: "not large" }` read as the node, the route and whether it is negated. */
export function afterTarget(entry: AfterEntry): { node: string; route?: string; negated: boolean } {
  if (typeof entry === 'string') return { node: entry, negated: false };
  const [node = '', route = ''] = Object.entries(entry)[0] ?? [];
  const negated = /^not\s+/.test(route);
  return { node, route: negated ? route.replace(/^not\s+/, '') : route, negated };
}
