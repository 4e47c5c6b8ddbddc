/**
 * OpenAPI links: where the id an operation answers with is used next. A
 * stateful client (schemathesis' stateful phase, a reader of the document)
 * follows them from a create to the operations on what it created.
 */

/** `METHOD /path/{param}` as the document names operations. */
type OperationKey = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;

export interface LinkSpec {
  from: OperationKey;
  status: number;
  to: OperationKey;
  /** Target parameter → runtime expression on the source response. */
  parameters?: Record<string, string>;
  /** Fields of the target's JSON body → runtime expressions. */
  requestBody?: Record<string, string>;
}

/** One source response feeding the same values to several operations. */
function fanOut(
  from: OperationKey,
  status: number,
  values: Omit<LinkSpec, 'from' | 'status' | 'to'>,
  to: OperationKey[],
) {
  return to.map((target): LinkSpec => ({ from, status, to: target, ...values }));
}

const workflowId = { parameters: { workflowId: '$response.body#/workflowId' } };
const caseId = { parameters: { caseId: '$response.body#/caseId' } };
const jobId = { parameters: { jobExecutionId: '$response.body#/jobExecutionId' } };

export const openApiLinks: LinkSpec[] = [
  ...fanOut('POST /api/v1/workflow', 201, workflowId, [
    'GET /api/v1/workflow/{workflowId}',
    'PATCH /api/v1/workflow/{workflowId}',
    'POST /api/v1/workflow/{workflowId}/activate',
    'POST /api/v1/workflow/{workflowId}/deactivate',
    'GET /api/v1/workflow/{workflowId}/run',
    'POST /api/v1/workflow/{workflowId}/run/cancel',
    'GET /workflow/{workflowId}',
    'POST /api/v1/workflow/{workflowId}/schedules',
    'POST /api/v1/workflow/{workflowId}/hooks',
  ]),
  ...fanOut('POST /api/v1/workflow', 201, { requestBody: { workflowId: '$response.body#/workflowId' } }, [
    'POST /api/v1/case',
    'POST /job/initiate',
  ]),
  ...fanOut('POST /api/v1/workflow/generate', 202, workflowId, [
    'GET /api/v1/workflow/{workflowId}/run',
    'POST /api/v1/workflow/{workflowId}/run/cancel',
    'GET /api/v1/workflow/{workflowId}',
  ]),
  ...fanOut('POST /api/v1/case', 201, caseId, [
    'POST /api/v1/case/{caseId}/execute',
    'GET /api/v1/case/{caseId}/status',
    'GET /api/v1/case/{caseId}/results',
    'GET /api/v1/case/{caseId}/audit',
    'POST /api/v1/case/{caseId}/cancel',
    'GET /api/v1/case/{caseId}/callbacks',
    'POST /api/v1/case/{caseId}/callbacks/redeliver',
  ]),
  ...fanOut('POST /job/initiate', 201, jobId, [
    'GET /job/{jobExecutionId}/status',
    'GET /job/{jobExecutionId}/results',
    'GET /job/{jobExecutionId}/audit',
  ]),
  ...fanOut('POST /job/initiate', 201, { requestBody: { jobExecutionId: '$response.body#/jobExecutionId' } }, [
    'POST /job/execute',
  ]),
  ...fanOut('POST /api/v1/file/upload/presigned', 201, { parameters: { fileId: '$response.body#/fileId' } }, [
    'GET /api/v1/file/{fileId}',
  ]),
  ...fanOut('POST /api/v1/code', 201, { parameters: { codeId: '$response.body#/id' } }, [
    'PATCH /api/v1/code/{codeId}',
  ]),
  ...fanOut('POST /api/v1/integration', 201, { parameters: { integrationId: '$response.body#/id' } }, [
    'GET /api/v1/integration/{integrationId}',
    'PATCH /api/v1/integration/{integrationId}',
  ]),
  ...fanOut('POST /api/v1/integration', 201, { parameters: { integrationVersionId: '$response.body#/versionId' } }, [
    'GET /api/v1/integration/v/{integrationVersionId}',
    'POST /api/v1/integration/v/{integrationVersionId}/credential',
    'POST /api/v1/integration/v/{integrationVersionId}/action',
  ]),
  ...fanOut(
    'POST /api/v1/integration/connect',
    201,
    { parameters: { connectionId: '$response.body#/activeIntegrationId' } },
    [
      'GET /api/v1/connection/{connectionId}',
      'POST /api/v1/connection/{connectionId}/reauthorize',
      'POST /api/v1/connection/{connectionId}/revoke',
    ],
  ),
  ...fanOut(
    'POST /api/v1/integration/connect',
    201,
    { parameters: { connectionToken: '$response.body#/connectionToken' } },
    ['GET /api/v1/integration/connect/{connectionToken}'],
  ),
  ...fanOut(
    'GET /api/v1/workspace/{workspaceId}/connections',
    200,
    { parameters: { connectionId: '$response.body#/connections/0/id' } },
    [
      'GET /api/v1/connection/{connectionId}',
      'POST /api/v1/connection/{connectionId}/reauthorize',
      'POST /api/v1/connection/{connectionId}/revoke',
    ],
  ),
  ...fanOut('POST /api/v1/subscriptions', 201, { parameters: { subscriptionId: '$response.body#/id' } }, [
    'GET /api/v1/subscriptions/{subscriptionId}',
    'PATCH /api/v1/subscriptions/{subscriptionId}',
    'DELETE /api/v1/subscriptions/{subscriptionId}',
    'POST /api/v1/subscriptions/{subscriptionId}/rotate-secret',
    'GET /api/v1/subscriptions/{subscriptionId}/deliveries',
  ]),
  ...fanOut('POST /api/v1/discovery/process', 201, { parameters: { processId: '$response.body#/id' } }, [
    'GET /api/v1/discovery/process/{processId}',
    'PATCH /api/v1/discovery/process/{processId}',
    'POST /api/v1/discovery/process/{processId}/version',
  ]),
  ...fanOut(
    'POST /api/v1/workflow/{workflowId}/schedules',
    201,
    { parameters: { scheduleId: '$response.body#/scheduleId' } },
    [
      'GET /api/v1/schedules/{scheduleId}',
      'PATCH /api/v1/schedules/{scheduleId}',
      'DELETE /api/v1/schedules/{scheduleId}',
      'POST /api/v1/schedules/{scheduleId}/pause',
      'POST /api/v1/schedules/{scheduleId}/resume',
    ],
  ),
  ...fanOut('POST /api/v1/workflow/{workflowId}/hooks', 201, { parameters: { hookId: '$response.body#/hookId' } }, [
    'GET /api/v1/hooks/{hookId}',
    'PATCH /api/v1/hooks/{hookId}',
    'DELETE /api/v1/hooks/{hookId}',
    'POST /api/v1/hooks/{hookId}/rotate-secret',
  ]),
];
