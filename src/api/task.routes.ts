import type { AppContext } from '../context.js';
import type { ApiRoutes } from './route.js';
import { z } from 'zod';
import { uuid } from './schemas/common.js';
import {
  completeBodySchema,
  decisionConflict,
  reassignBodySchema,
  taskErrors as errors,
  taskListQuery,
  taskListSchema,
  taskSchema,
} from './schemas/tasks.js';
import { taskListView, taskView } from './views/tasks.js';

const tags = ['Tasks'];
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
    path: '/api/v1/tasks/:taskId/complete',
    summary: 'Complete a human task',
    description:
      'Submits the form: outputs are checked against it (400 naming the fields, nothing changes), then the waiting case takes the decision and goes on. A second completion is 409. Case: Full or the assignee.',
    tags,
    auth: true,
    params: taskParams,
    body: completeBodySchema,
    responses: { 200: { description: 'The completed task', schema: taskSchema }, ...errors, ...decisionConflict },
    handler: async ({ auth, params, body, res }) => {
      res.json(taskView(await tasks.complete(auth, params.taskId, body.outputs)));
    },
  });
}
