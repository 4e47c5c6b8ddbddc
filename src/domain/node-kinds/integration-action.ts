import { defaultNodeTimeoutMs } from '../cases.js';
import { activityKind, NodeFailure, type Zod } from './kind.js';
import { toNodeLogs } from './python-code.js';

/**
 * `process`: the connection (the `activeIntegrationId` connect returned) and
 * the catalog action version to run with it. Ids only: the credential never
 * enters process, inputs, outputs or history.
 */
function processSchema(zod: Zod) {
  return zod.object({ connection_id: zod.uuid(), action_version_id: zod.uuid() }).strict();
}

/**
 * `integration_action`: runs a catalog action's Python (script form, network
 * through the outbound policy) with the node's inputs as `input_data` and the
 * connection's decrypted credential as `credential_value`; `result` must match
 * the action's declared outputs.
 */
export const integrationActionKind = activityKind({
  handlerClass: 'integration_action',
  nodeType: 'action',
  describe:
    'Integration action: process { connection_id, action_version_id }; runs the action code with input_data and the connection credential.',
  process: processSchema,
  async run(context, services) {
    const { node, process, inputs } = context;
    const result = await services.integrationAction(context, {
      connectionId: process.connection_id,
      actionVersionId: process.action_version_id,
      inputs,
      timeoutMs: node.execution?.timeout_ms ?? defaultNodeTimeoutMs,
      deadline: context.deadline,
      signal: context.signal,
    });
    const logs = toNodeLogs(result.logs, result.stdout, result.stderr);
    if (!result.ok) {
      const { message, kind, traceback, retryAfterMs } = result.error;
      // The action's own exception (an HTTP failure it raised, a bug) is kind `action`; the rest keep the runner's kind.
      throw new NodeFailure(message, {
        kind: kind === 'error' ? 'action' : kind,
        logs,
        traceback,
        retryAfterMs,
        retryable: kind !== 'output',
      });
    }
    return { outputs: result.outputs, logs };
  },
});
