import { z } from 'zod';
import type { HandlerClass } from './handler-classes.js';

/**
 * `process` of a `condition` node: routing without code. Each route id maps
 * to rules combined with `all` (every rule) or `any` (at least one); the
 * node sets the route's bool output to the outcome. Operands are an input
 * variable (`{ var: "name" }` or a dotted path into it, `"order.total"`) or a
 * JSON constant (`{ value: ... }`). Nothing is evaluated as code.
 */
export const conditionOperandSchema = z.union([
  z.object({ var: z.string().min(1).max(512) }).strict(),
  z.object({ value: z.unknown() }).strict(),
]);

export const conditionOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists', 'empty'] as const;
const unaryOps: ReadonlySet<string> = new Set(['exists', 'empty']);

export const conditionRuleSchema = z
  .object({
    left: conditionOperandSchema,
    op: z.enum(conditionOps),
    right: conditionOperandSchema.optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (unaryOps.has(rule.op) && rule.right !== undefined) ctx.addIssue({ code: 'custom', message: `op ${rule.op} takes no right operand`, path: ['right'] });
    if (!unaryOps.has(rule.op) && rule.right === undefined) ctx.addIssue({ code: 'custom', message: `op ${rule.op} needs a right operand`, path: ['right'] });
  });

const rules = z.array(conditionRuleSchema).min(1).max(50);

export const conditionRouteRulesSchema = z
  .union([z.object({ all: rules }).strict(), z.object({ any: rules }).strict()])
  .describe('Exactly one of all / any');

export const conditionProcessSchema = z
  .object({ routes: z.record(z.string().min(1), conditionRouteRulesSchema).refine((r) => Object.keys(r).length > 0, 'at least one route') })
  .strict();

export type ConditionOperand = z.infer<typeof conditionOperandSchema>;
export type ConditionRule = z.infer<typeof conditionRuleSchema>;
export type ConditionProcess = z.infer<typeof conditionProcessSchema>;

export const conditionHandlerClass: HandlerClass = {
  nodeType: 'condition',
  process: conditionProcessSchema,
  describe: 'Routing without code: process.routes maps each route id to all/any rules over the node inputs; sets the route bool outputs.',
};
