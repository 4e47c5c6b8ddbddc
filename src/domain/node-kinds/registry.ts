import type { WorkflowNode } from '../graph.js';
import { handlerClassName } from '../vocabulary.js';
import { callWorkflowKind } from './call-workflow.js';
import { conditionKind } from './condition.js';
import { humanTaskKind } from './human-task.js';
import { inputKind } from './input.js';
import { integrationActionKind } from './integration-action.js';
import type { NodeKind } from './kind.js';
import { llmAgentKind } from './llm-agent.js';
import { outputKind } from './output.js';
import { pythonCodeKind } from './python-code.js';

/** Node kinds by `handler_class`. */
export class NodeKindRegistry {
  private readonly kinds = new Map<string, NodeKind>();

  constructor(kinds: NodeKind[]) {
    for (const kind of kinds) this.register(kind);
  }

  /** Adds a kind; a handler_class is registered once. */
  register(kind: NodeKind): void {
    if (this.kinds.has(kind.handlerClass)) throw new Error(`Node kind ${kind.handlerClass} is registered already`);
    this.kinds.set(kind.handlerClass, kind);
  }

  /** The kind a node runs with; undefined when its handler class is not registered. */
  of(node: Pick<WorkflowNode, 'type' | 'handler_class'>): NodeKind | undefined {
    return this.kinds.get(handlerClassName(node));
  }

  all(): NodeKind[] {
    return [...this.kinds.values()];
  }
}

/**
 * Every node kind: one line each. Graph validation, the case engine (the
 * workflow and the runNode activity) and the docs read this registry.
 */
export const nodeKinds = new NodeKindRegistry([
  inputKind,
  outputKind,
  conditionKind,
  pythonCodeKind,
  integrationActionKind,
  llmAgentKind,
  humanTaskKind,
  callWorkflowKind,
]);

/** Whether the case starts at this node (its kind is an entry kind, i.e. `input`). */
export function isEntryNode(node: Pick<WorkflowNode, 'type' | 'handler_class'>): boolean {
  return nodeKinds.of(node)?.entry === true;
}
