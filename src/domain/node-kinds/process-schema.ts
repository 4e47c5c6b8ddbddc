import { z, type ZodType } from 'zod';
import type { NodeKind } from './kind.js';

const built = new WeakMap<NodeKind, ZodType>();

/** A kind's `process` schema, built once (graph validation and the runNode activity; never the workflow). */
export function processSchemaOf(kind: NodeKind): ZodType {
  let schema = built.get(kind);
  if (!schema) {
    schema = kind.processSchema(z);
    built.set(kind, schema);
  }
  return schema;
}
