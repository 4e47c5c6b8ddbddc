import type { FileService } from '../../src/files/file-service.js';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { pureNodeHandlers } from './pure.js';
import { PythonCodeHandler, type CodeVersionLoader } from './python-code.js';
import type { NodeHandler } from './types.js';

export interface NodeHandlerDeps {
  python: PythonRunnerPool;
  files: FileService;
  loadCodeVersion: CodeVersionLoader;
}

/**
 * Every node handler by `handler_class`. A new kind of node (integration
 * action, LLM agent, …) is one class implementing NodeHandler, one entry
 * here, and its process schema in src/domain/handler-classes.ts.
 */
export function createNodeHandlers(deps: NodeHandlerDeps): Record<string, NodeHandler> {
  const handlers: NodeHandler[] = [...Object.values(pureNodeHandlers), new PythonCodeHandler(deps)];
  return Object.fromEntries(handlers.map((h) => [h.handlerClass, h]));
}
