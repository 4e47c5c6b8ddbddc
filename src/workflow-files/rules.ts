import type { RouteRules, RuleSpec } from './format.js';

/**
 * Condition rules written the short way: `amount > 100`, `tier == "gold"`, `tags contains urgent`, `note exists`.
 * The left side is an input variable (or a dotted path into it); the right side is JSON, or else the text as a
 * string. Anything else (a variable on the right, a constant on the left) is written as the graph's own object.
 */
const symbols: Record<string, string> = { '==': 'eq', '!=': 'ne', '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' };
const words = new Set(['contains', 'in']);
const unary = new Set(['exists', 'empty']);
const symbolOf = Object.fromEntries(Object.entries(symbols).map(([s, op]) => [op, s]));

type Rule = Record<string, unknown>;
interface Rules {
  all?: Rule[];
  any?: Rule[];
}

export class RuleSyntaxError extends Error {}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function parseRule(spec: RuleSpec): Rule {
  if (typeof spec !== 'string') return spec;
  const match = /^\s*(\S+)\s+(==|!=|>=|<=|>|<|contains|in|exists|empty)(?:\s+(.*?))?\s*$/.exec(spec);
  const [, left, token, right] = match ?? [];
  if (left === undefined || token === undefined)
    throw new RuleSyntaxError(
      `"${spec}": write <variable> <op> <value>, op one of == != > >= < <= contains in exists empty`,
    );
  const op = symbols[token] ?? token;
  if (unary.has(op)) {
    if (right !== undefined) throw new RuleSyntaxError(`"${spec}": ${op} takes no value`);
    return { left: { var: left }, op };
  }
  if (right === undefined) throw new RuleSyntaxError(`"${spec}": ${token} needs a value`);
  return { left: { var: left }, op, right: { value: parseValue(right) } };
}

/** The short text of a rule when it has one; the object otherwise. */
function formatRule(rule: Rule): RuleSpec {
  const { left, op, right } = rule;
  const leftVar = typeof left === 'object' && left !== null && 'var' in left ? left.var : undefined;
  if (typeof leftVar !== 'string' || /\s/.test(leftVar) || typeof op !== 'string') return rule;
  if (unary.has(op)) return right === undefined ? `${leftVar} ${op}` : rule;
  const token = symbolOf[op] ?? (words.has(op) ? op : undefined);
  if (token === undefined || typeof right !== 'object' || right === null || !('value' in right)) return rule;
  // JSON text parses back to the same value (undefined has none).
  return right.value === undefined ? rule : `${leftVar} ${token} ${JSON.stringify(right.value)}`;
}

export function parseRouteRules(spec: RouteRules): Rules {
  if (typeof spec === 'string' || !Array.isArray(spec)) {
    if (typeof spec === 'object' && 'all' in spec && Array.isArray(spec.all)) return { all: spec.all.map(parseRule) };
    if (typeof spec === 'object' && 'any' in spec && Array.isArray(spec.any)) return { any: spec.any.map(parseRule) };
    return { all: [parseRule(spec)] };
  }
  return { all: spec.map(parseRule) };
}

/** One rule alone is written as itself, several `all` rules as a list, `any` rules under `any`. */
export function formatRouteRules(rules: Rules): RouteRules {
  if (rules.any) return { any: rules.any.map(formatRule) };
  const all = (rules.all ?? []).map(formatRule);
  return all.length === 1 && all[0] !== undefined ? all[0] : all;
}
