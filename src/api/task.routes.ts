import { publicUrl } from '../config/config.js';
import type { AppContext } from '../context.js';
import type { ApiRoutes } from './route.js';
import { statsRoute } from './stats-route.js';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { errorBodySchema, uuid } from './schemas/common.js';
import {
  completeBodySchema,
  decisionConflict,
  reassignBodySchema,
  taskErrors as errors,
  taskListQuery,
  taskListSchema,
  taskLinkSchema,
  taskSchema,
  taskStatsQuery,
  taskStatsSchema,
} from './schemas/tasks.js';
import type { LinkState } from '../tasks/task-service.js';
import { formValues, taskLinkPage } from './views/task-page.js';
import { taskListView, taskView } from './views/tasks.js';

const tags = ['Tasks'];
const linkParams = z.object({ token: z.string().max(200) });
const formParser: RequestHandler = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 });

/** The url-encoded fields of a completion page's form. */
async function formFields(req: Request, res: Response): Promise<Record<string, unknown>> {
  await new Promise<void>((resolve, reject) =>
    formParser(req, res, (err?: unknown) =>
      err ? reject(err instanceof Error ? err : new Error('Unreadable body', { cause: err })) : resolve(),
    ),
  );
  return typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
}

function sendPage(res: Response, state: LinkState): void {
  const { status, html } = taskLinkPage(state);
  res.setHeader('cache-control', 'no-store');
  // The URL carries the token: nothing on the page may send it on (no referrer, no subresources, no script).
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
  res.status(status).type('html').send(html);
}
const taskParams = z.object({ taskId: uuid });

/** The task inbox: human tasks the cases wait on (see docs/human-tasks.md). */
export function registerTaskRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { tasks } = ctx.services;

  api.route({
    method: 'get',
    path: '/api/v1/tasks',
    summary: 'List human tasks',
    description: 'Tasks of the cases the key reads (Case: Read), newest or soonest-due first, a cursor page at a time.',
    tags,
    auth: true,
    query: taskListQuery,
    responses: { 200: { description: 'A page of tasks', schema: taskListSchema }, ...errors },
    handler: async ({ auth, query, res }) => {
      res.json(taskListView(await tasks.list(auth, query)));
    },
  });

  statsRoute(api, {
    figures: 'tasks',
    summary: "The caller's human task figures per workspace",
    description:
      'Per workspace the key reads with Case: Read: tasks waiting for a decision now (open, claimed), those closed ' +
      'in a window (default: the last day, at most 31 days) by how, and the time from opening to each decision. ' +
      'Filter: workspaceId (one the key does not reach counts nothing). Computed from the store: the per-tenant ' +
      'figures /metrics does not label.',
    tags,
    query: taskStatsQuery,
    answer: { description: 'Figures per workspace', schema: taskStatsSchema },
    refusals: { 401: errors[401], 403: { description: 'The key lacks Case: Read', schema: errorBodySchema } },
    stats: (auth, query) => tasks.stats(auth, query),
  });

  api.route({
    method: 'get',
    path: '/api/v1/tasks/:taskId',
    summary: 'Get a human task',
    description: 'Its title, rendered instructions, form, case, assignee, due time and history. Requires Case: Read.',
    tags,
    auth: true,
    params: taskParams,
    responses: { 200: { description: 'The task', schema: taskSchema }, ...errors },
    handler: async ({ auth, params, res }) => {
      res.json(taskView(await tasks.details(auth, params.taskId)));
    },
  });

  const decisions = [
    {
      action: 'claim',
      summary: 'Claim a human task',
      description:
        'Takes an open task: until released, only the claimer or Case: Full decide it. Case: Full or the assignee.',
      run: (auth: Parameters<typeof tasks.claim>[0], taskId: string) => tasks.claim(auth, taskId),
    },
    {
      action: 'release',
      summary: 'Release a claimed human task',
      description: 'Gives a claimed task back (the claimer, or Case: Full).',
      run: (auth: Parameters<typeof tasks.release>[0], taskId: string) => tasks.release(auth, taskId),
    },
  ] as const;
  for (const decision of decisions) {
    api.route({
      method: 'post',
      path: `/api/v1/tasks/:taskId/${decision.action}`,
      summary: decision.summary,
      description: decision.description,
      tags,
      auth: true,
      params: taskParams,
      responses: {
        200: { description: 'The task after the request', schema: taskSchema },
        ...errors,
        ...decisionConflict,
      },
      handler: async ({ auth, params, res }) => {
        res.json(taskView(await decision.run(auth, params.taskId)));
      },
    });
  }

  api.route({
    method: 'post',
    path: '/api/v1/tasks/:taskId/reassign',
    summary: 'Reassign a human task',
    description: 'Hands the task to another assignee; a claim ends. Requires Case: Full.',
    tags,
    auth: true,
    params: taskParams,
    body: reassignBodySchema,
    responses: {
      200: { description: 'The task after the request', schema: taskSchema },
      ...errors,
      ...decisionConflict,
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(taskView(await tasks.reassign(auth, params.taskId, body.assignee)));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/tasks/:taskId/link',
    summary: 'Create a completion link for a human task',
    description:
      'A single-use link to a small form page for a person without an API key; it replaces any earlier link of the task and expires with the task (its due time, else cases.maxWaitMs). The URL is shown once. Requires Case: Full.',
    tags,
    auth: true,
    params: taskParams,
    responses: {
      201: { description: 'The link (shown once)', schema: taskLinkSchema },
      ...errors,
      ...decisionConflict,
    },
    handler: async ({ auth, params, res }) => {
      const link = await tasks.createLink(auth, params.taskId);
      res.setHeader('cache-control', 'no-store');
      res
        .status(201)
        .json({ url: `${publicUrl(ctx.config)}/api/v1/task-links/${link.token}`, expiresAt: link.expiresAt });
    },
  });

  const pageResponses = {
    200: { description: 'HTML: the form, or the thank-you page', html: true },
    400: { description: 'HTML: a link we never gave out', html: true },
    410: {
      description:
        'HTML: the task was decided, cancelled or is past due, or the key that created the link can no longer decide it',
      html: true,
    },
  };

  api.route({
    method: 'get',
    path: '/api/v1/task-links/:token',
    summary: 'Completion page of a human task',
    description:
      "No API key: the link authenticates. The form built from the task's form schema, or a page saying why not.",
    tags,
    auth: false,
    params: linkParams,
    responses: pageResponses,
    handler: async ({ params, res }) => {
      sendPage(res, await tasks.linkState(params.token));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/task-links/:token',
    summary: 'Submit the completion page of a human task',
    description: "The page's form, url-encoded; the answer is the form again with the problems, or the thank-you page.",
    tags,
    auth: false,
    params: linkParams,
    body: z.record(z.string(), z.string()),
    bodyMediaType: 'application/x-www-form-urlencoded',
    validateBody: false,
    responses: pageResponses,
    handler: async ({ req, params, res }) => {
      const state = await tasks.linkState(params.token);
      if (state.page !== 'form') {
        sendPage(res, state);
        return;
      }
      sendPage(res, await tasks.completeByLink(params.token, formValues(state.task.form, await formFields(req, res))));
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/tasks/:taskId/complete',
    summary: 'Complete a human task',
    description:
      'Submits the form: outputs are checked against it (400 naming the fields, nothing changes), then the waiting case takes the decision and goes on. A second completion is 409. Case: Full or the assignee.',
    tags,
    auth: true,
    params: taskParams,
    body: completeBodySchema,
    responses: {
      200: { description: 'The completed task', schema: taskSchema },
      ...errors,
      ...decisionConflict,
      413: {
        description:
          'The body over the configured size limit, or outputs over cases.maxNodeOutputBytes as JSON (they become the node’s outputs)',
        schema: errorBodySchema,
      },
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(taskView(await tasks.complete(auth, params.taskId, body.outputs)));
    },
  });
}
