import { describe, expectTypeOf, it } from 'vitest';
import { createClient, type paths } from '../../src/client/index.js';
import type { StatusWithBody, StatusWithoutBody } from '../support/harness.js';

/*
 * Type assertions: the type check (`npm run typecheck`) is what fails when they stop holding; the test run
 * only shows them.
 */

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

type WorkflowPatch = Json<'/api/v1/workflow/{workflowId}', 'patch'>;
type ConnectBody = Json<'/api/v1/integration/connect', 'post'>['connection'];
type CaseBody = Json<'/api/v1/case', 'post'>;

describe('the typed client', () => {
  it('types an "at least one of" body as the object, with one of its fields present', () => {
    expectTypeOf<{ name: string }>().toExtend<WorkflowPatch>();
    expectTypeOf<{ maxConcurrentCases: null }>().toExtend<WorkflowPatch>();
    expectTypeOf<Record<string, never>>().not.toExtend<WorkflowPatch>();
    expectTypeOf<{ name: number }>().not.toExtend<WorkflowPatch>();
    expectTypeOf<{ workflowId: string }>().toExtend<CaseBody>();
    expectTypeOf<{ title: string }>().not.toExtend<CaseBody>();
    const connection = { name: 'c', workspaceId: 'w', integrationVersionId: 'i', actionVersionId: 'a' };
    expectTypeOf({ ...connection, activeCredentialId: 'x' }).toExtend<ConnectBody>();
    expectTypeOf(connection).not.toExtend<ConnectBody>();
  });

  it('answered() takes only calls answering a body, answeredEmpty() only calls answering none', () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9' });
    const onHook = { params: { path: { hookId: 'h' } } };
    // Never called: their replies' types are what the statuses are derived from.
    const calls = () =>
      [client.DELETE('/api/v1/hooks/{hookId}', onHook), client.GET('/api/v1/hooks/{hookId}', onHook)] as const;
    expectTypeOf(calls).toBeFunction();
    type DeleteReply = Awaited<ReturnType<typeof calls>[0]>;
    type GetReply = Awaited<ReturnType<typeof calls>[1]>;
    // A status argument of these types accepts no number: the misuse does not compile.
    expectTypeOf<StatusWithBody<DeleteReply>>().toEqualTypeOf<'answers without a body: use answeredEmpty()'>();
    expectTypeOf<StatusWithoutBody<GetReply>>().toEqualTypeOf<'answers with a body: use answered()'>();
    expectTypeOf<StatusWithBody<GetReply>>().toEqualTypeOf<number>();
    expectTypeOf<StatusWithoutBody<DeleteReply>>().toEqualTypeOf<number>();
  });
});
