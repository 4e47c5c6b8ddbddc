import type { ConditionOperand, ConditionProcess, ConditionRule } from './condition.js';

/**
 * Evaluates condition-node rules (schema in condition.ts). Pure and
 * deterministic: the case-run workflow runs it inline. Variable paths walk
 * own properties only, so `__proto__` and friends read as undefined.
 */
function readPath(inputs: Record<string, unknown>, path: string): unknown {
  let current: unknown = inputs;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function operand(o: ConditionOperand | undefined, inputs: Record<string, unknown>): unknown {
  if (o === undefined) return undefined;
  return 'var' in o ? readPath(inputs, o.var) : o.value;
}

/** Structural equality of JSON values. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** Numbers compare as numbers, strings (ISO dates included) as strings; anything else never orders. */
function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function contains(container: unknown, item: unknown): boolean {
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (Array.isArray(container)) return container.some((v) => jsonEqual(v, item));
  return false;
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

export function evaluateRule(rule: ConditionRule, inputs: Record<string, unknown>): boolean {
  const left = operand(rule.left, inputs);
  const right = operand(rule.right, inputs);
  const order = (test: (n: number) => boolean) => {
    const c = compare(left, right);
    return c !== undefined && test(c);
  };
  switch (rule.op) {
    case 'eq':
      return jsonEqual(left, right);
    case 'ne':
      return !jsonEqual(left, right);
    case 'gt':
      return order((c) => c > 0);
    case 'gte':
      return order((c) => c >= 0);
    case 'lt':
      return order((c) => c < 0);
    case 'lte':
      return order((c) => c <= 0);
    case 'contains':
      return contains(left, right);
    case 'in':
      return contains(right, left);
    case 'exists':
      return left !== undefined && left !== null;
    case 'empty':
      return isEmpty(left);
  }
}

/** Each route id of the process → whether its rules hold. */
export function evaluateCondition(process: ConditionProcess, inputs: Record<string, unknown>): Record<string, boolean> {
  const outcome: Record<string, boolean> = {};
  for (const [routeId, rules] of Object.entries(process.routes)) {
    outcome[routeId] =
      'all' in rules ? rules.all.every((r) => evaluateRule(r, inputs)) : rules.any.some((r) => evaluateRule(r, inputs));
  }
  return outcome;
}
