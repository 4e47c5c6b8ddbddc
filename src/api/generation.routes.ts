import type { Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { runStatuses, taskStatuses } from '../domain/generation/run.js';
import type { AuthContext } from '../domain/auth-context.js';
import { countRefusal, takeRateLimit } from './rate-limits.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import { uuid } from './schemas/common.js';

const startBody = z
  .object({
    prompt: z.string().trim().min(1).max(20_000).optional().meta({
      description:
        'The process to build, in plain language; required unless processId is given (then: extra instructions for the agents)',
    }),
    processId: uuid.optional().meta({
      description:
        'Build from this discovered process (GET /api/v1/discovery/process/{processId}); needs Discovery: Read in its workspace',
    }),
    processVersionId: uuid
      .optional()
      .meta({ description: "A snapshot of the process to build from; omitted: the process's current state" }),
    workflowId: uuid
      .optional()
      .meta({ description: 'Rebuild this workflow (a new version); omitted: a new workflow is created' }),
    name: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .optional()
      .meta({ description: 'Run title and, for a new workflow, its name' }),
    fileUrls: z.array(z.string().max(2048)).max(20).default([]).meta({
      description: 'File URLs for the agents to read; unreadable ones are skipped with a note in the task results',
    }),
  })
  .refine((body) => body.prompt !== undefined || body.processId !== undefined, {
    message: 'send a prompt, a processId, or both',
    path: ['prompt'],
  })
  .refine((body) => body.processVersionId === undefined || body.processId !== undefined, {
    message: 'processVersionId needs the processId it is a version of',
    path: ['processVersionId'],
  });
const workspaceHeaders = z.object({ 'x-workspace-id': uuid.meta({ description: 'Workspace of the workflow' }) });
const workflowParams = z.object({ workflowId: uuid });
const runQuery = z.object({
  runId: uuid.optional().meta({ description: 'Defaults to the current or most recent run' }),
});
const cancelBody = z.object({ runId: uuid.optional().meta({ description: "Defaults to the workflow's active run" }) });

const usageSchema = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });
const taskSchema = z.object({
  task_id: z.string(),
  specialty: z.enum(['file_reader', 'triage', 'architect', 'builder', 'reviewer', 'applier']),
  worker_name: z.string(),
  worker_instance_id: z.string().nullable(),
  status: z.enum(taskStatuses),
  attempt: z.number(),
  result_summary: z.string(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  usage: usageSchema,
});
const runSchema = z.object({
  workflow_id: z.string(),
  run_id: z.string(),
  status: z.enum(runStatuses),
  progress: z.number().nullable(),
  text: z.string(),
  display_name: z.string(),
  origin: z.string(),
  room_active: z.boolean(),
  started_at: z.string(),
  last_activity_at: z.string(),
  finished_at: z.string().nullable(),
  elapsed_ms: z.number(),
  planner: z.enum(['llm', 'offline']).meta({ description: 'The configured LLM, or the built-in offline planner' }),
  instances: z.object({
    running: z.number(),
    done: z.number(),
    failed: z.number(),
    by_status: z.record(z.string(), z.number()),
    live: z.object({
      busy: z.boolean(),
      working_agents: z.number(),
      working_agents_detail: z.array(
        z.object({ task_id: z.string(), specialty: z.string(), worker_name: z.string(), started_at: z.string() }),
      ),
      pending_running_tasks: z.number(),
      master_evaluating: z.boolean(),
    }),
  }),
  tasks_by_agent: z.array(taskSchema),
  task_count: z.number(),
  usage: usageSchema.meta({ description: 'Tokens used by the whole run' }),
  applied_versions: z.array(
    z.object({
      workflowVersionId: z.string(),
      workflowVersionNumber: z.number(),
      stage: z.enum(['skeleton', 'final']),
    }),
  ),
  needs_attention: z.array(z.string()).meta({ description: 'Steps left needing attention (status partial)' }),
  source_process: z
    .object({
      processId: z.string(),
      processVersionId: z.string().nullable(),
      versionNumber: z.number().nullable(),
      name: z.string(),
      processUpdatedAt: z.string(),
    })
    .nullable()
    .meta({
      description:
        'The discovered process the run built from: the snapshot (processVersionId, versionNumber) or, when both are null, its current state as of processUpdatedAt',
    }),
});
const startedSchema = z.object({
  workflowId: z.string(),
  runId: z.string(),
  status: z.enum(runStatuses),
  createdWorkflow: z.boolean(),
});
const cancelledSchema = z.object({ cancelled: z.boolean(), run_id: z.string(), workflow_id: z.string() });

const limited = {
  429: {
    description:
      'Too many generation requests for this key, or too many refused ones (the generation-refused quota); Retry-After, RateLimit, RateLimit-Policy headers',
  },
};
const bearer = 'The key is accepted as x-service-key or Authorization: Bearer.';

export function registerGenerationRoutes(api: ApiRoutes, ctx: AppContext): void {
  const service = ctx.services.generation;
  const { rateLimitMax, rateLimitWindowMs } = ctx.config.generation;
  const quota = (name: string, keyId: string) => ({
    name,
    key: `${name}:${keyId}`,
    limit: rateLimitMax,
    windowMs: rateLimitWindowMs,
  });
  /**
   * One fixed window per API key across the generation endpoints, taken once the request is valid:
   * a request is told what is wrong with it (400) before it can be told to slow down (429).
   */
  const limit = (keyId: string, res: Response) =>
    takeRateLimit(res, ctx.services.rateLimits, 'generation requests', [quota('generation', keyId)]);
  /** Refused requests (400, 403, 404 before the limit was taken) spend a window of their own, as large. */
  const onRefused = (auth: AuthContext, res: Response) =>
    countRefusal(res, ctx.services.rateLimits, 'refused generation requests', [
      quota('generation-refused', auth.keyId),
    ]);

  api.route({
    method: 'post',
    path: '/api/v1/workflow/generate',
    summary: 'Generate a workflow from a prompt',
    description:
      'Starts a generation run: agents plan and build the workflow and apply it as new versions (a skeleton, then the result). ' +
      'Without workflowId a new (inactive) workflow is created in the workspace. One active run per workflow. Poll ' +
      `GET /api/v1/workflow/{workflowId}/run every 3-10 s. Requires Workflow: Full in the workspace and, because generated steps are ` +
      `inline Python, Code: Full and a verified organization (as for inline source in a hand-made workflow). ${bearer}`,
    tags: ['Generation'],
    auth: true,
    headers: workspaceHeaders,
    body: startBody,
    validateBody: false,
    responses: {
      202: { description: 'The run started', schema: startedSchema },
      400: {
        description:
          'Missing or malformed x-workspace-id, invalid body (processId or processVersionId not a UUID), the workflow is in another workspace, or the process has no steps or is too large',
      },
      403: {
        description:
          "No access to the workspace, or the key lacks Workflow: Full / Code: Full, or the organization is not verified, or the process is another organization's or the key lacks Discovery: Read in its workspace",
      },
      404: {
        description:
          'The workspace, the workflow or the process does not exist, or processVersionId is not a version of the process',
      },
      409: { description: 'The workflow already has an active generation run' },
      ...limited,
      503: { description: 'The workflow engine is unreachable; retry after Retry-After seconds' },
    },
    onRefused,
    handler: async ({ req, res, auth }) => {
      const headers = parseOrThrow(workspaceHeaders, req.headers, 'header');
      res.status(202).json(
        await service.start(auth, headers['x-workspace-id'], async () => {
          const body = parseOrThrow(startBody, req.body ?? {}, 'body');
          await limit(auth.keyId, res);
          return body;
        }),
      );
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/workflow/:workflowId/run',
    summary: 'Get a generation run',
    description: `The run record (runId, or the current or most recent run). Requires Workflow: Read in the workflow's workspace. ${bearer}`,
    tags: ['Generation'],
    auth: true,
    params: workflowParams,
    query: runQuery,
    responses: {
      200: { description: 'The run', schema: runSchema },
      400: { description: 'workflowId or runId is not a UUID' },
      403: {
        description: 'The key lacks Workflow: Read in the workspace, or the workflow belongs to another organization',
      },
      404: { description: 'No such workflow, no run for it, or unknown runId' },
      ...limited,
    },
    onRefused,
    handler: async ({ res, params, query, auth }) => {
      await limit(auth.keyId, res);
      res.json(await service.get(auth, params.workflowId, query.runId));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/workflow/:workflowId/run/cancel',
    summary: 'Cancel a generation run',
    description:
      'Stops the active run (runId, or the active one): agents stop further work; versions already applied are kept. A second cancel ' +
      `answers 404 (no active run). Requires Workflow: Full. ${bearer}`,
    tags: ['Generation'],
    auth: true,
    params: workflowParams,
    body: cancelBody,
    validateBody: false,
    responses: {
      200: { description: 'Cancelled', schema: cancelledSchema },
      400: { description: 'workflowId is not a UUID, or runId is present but malformed' },
      403: { description: 'No access, or the key lacks Workflow: Full' },
      404: { description: 'No active run (or room) for the workflow' },
      ...limited,
    },
    onRefused,
    handler: async ({ req, res, params, auth }) => {
      const body = parseOrThrow(cancelBody, req.body ?? {}, 'body');
      await limit(auth.keyId, res);
      res.json(await service.cancel(auth, params.workflowId, body.runId));
    },
  });
}
