import type { z } from 'zod';
import { routeVariableName } from '../case-graph.js';
import { evaluateCondition } from './condition-rules.js';
import { inlineKind, type Zod } from './kind.js';

/**
 * `process` of a `condition` node: routing without code. Each route id maps
 * to rules combined with `all` (every rule) or `any` (at least one); the
 * node sets the route's bool output to the outcome. Operands are an input
 * variable (`{ var: "name" }` or a dotted path into it, `"order.total"`) or a
 * JSON constant (`{ value: ... }`). Nothing is evaluated as code.
 */
const conditionOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists', 'empty'] as const;
const unaryOps: ReadonlySet<string> = new Set(['exists', 'empty']);

function operandSchema(zod: Zod) {
  return zod.union([
    zod.object({ var: zod.string().min(1).max(512) }).strict(),
    zod.object({ value: zod.unknown() }).strict(),
  ]);
}

function ruleSchema(zod: Zod) {
  return zod
    .object({ left: operandSchema(zod), op: zod.enum(conditionOps), right: operandSchema(zod).optional() })
    .strict()
    .superRefine((rule, ctx) => {
      if (unaryOps.has(rule.op) && rule.right !== undefined)
        ctx.addIssue({ code: 'custom', message: `op ${rule.op} takes no right operand`, path: ['right'] });
      if (!unaryOps.has(rule.op) && rule.right === undefined)
        ctx.addIssue({ code: 'custom', message: `op ${rule.op} needs a right operand`, path: ['right'] });
    });
}

function processSchema(zod: Zod) {
  const rules = zod.array(ruleSchema(zod)).min(1).max(50);
  const routeRules = zod
    .union([zod.object({ all: rules }).strict(), zod.object({ any: rules }).strict()])
    .describe('Exactly one of all / any');
  return zod
    .object({
      routes: zod
        .record(zod.string().min(1), routeRules)
        .refine((r) => Object.keys(r).length > 0, 'at least one route'),
    })
    .strict();
}

export type ConditionOperand = z.output<ReturnType<typeof operandSchema>>;
export type ConditionRule = z.output<ReturnType<typeof ruleSchema>>;
export type ConditionProcess = z.output<ReturnType<typeof processSchema>>;

/** Routing without code: sets each route's bool output from structured rules. */
export const conditionKind = inlineKind({
  handlerClass: 'condition',
  nodeType: 'condition',
  describe:
    'Routing without code: process.routes maps each route id to all/any rules over the node inputs; sets the route bool outputs.',
  process: processSchema,
  evaluate({ node, process, inputs }) {
    const outputs: Record<string, unknown> = {};
    for (const [routeId, value] of Object.entries(evaluateCondition(process, inputs)))
      outputs[routeVariableName(node, routeId)] = value;
    return { outputs, logs: [] };
  },
});
