import { z } from 'zod';
import type { HandlerClass } from './handler-classes.js';

/**
 * `process` of a `python_code` node: inline source, or a code node version
 * of the organization's catalog. Either way the module defines
 * `main(inputs)` and returns a dict keyed by the node's output variable names.
 */
export const pythonCodeProcessSchema = z.union([
  z.object({ source: z.string().min(1).max(262_144) }).strict(),
  z.object({ code_id: z.uuid(), code_version_id: z.uuid() }).strict(),
]);
export type PythonCodeProcess = z.infer<typeof pythonCodeProcessSchema>;

export const pythonCodeHandlerClass: HandlerClass = {
  nodeType: 'code',
  process: pythonCodeProcessSchema,
  describe: 'Python code: process { source } inline or { code_id, code_version_id } from the catalog; main(inputs) returns the output variables.',
};
