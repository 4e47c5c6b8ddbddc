import type { AppContext } from '../context.js';
import { backfillBodySchema, createScheduleBodySchema, updateScheduleBodySchema } from '../schedules/schemas.js';
import type { ApiRoutes } from './route.js';
import { errorBodySchema } from './schemas/common.js';
import {
  backfillStartedSchema,
  scheduleDetailsSchema,
  scheduleErrors as errors,
  scheduleListQuery,
  scheduleListSchema,
  scheduleParams,
} from './schemas/schedules.js';
import { workflowParams } from './schemas/workflows.js';
import { scheduleDetailsView, scheduleListView } from './views/schedules.js';

const noActiveVersion = {
  409: { description: 'The workflow has no active version and none is pinned', schema: errorBodySchema },
};
const lacksSchedule = {
  409: { description: 'Temporal lacks the schedule: PATCH it to re-create it', schema: errorBodySchema },
};

/** Schedules: cases started by a Temporal Schedule (docs/triggers.md). */
export function registerScheduleRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { schedules } = ctx.services;
  const tags = ['Schedules'];
  const managed = 'Requires Workflow: Full (and Case: Full) in the workflow’s workspace.';

  api.route({
    method: 'post',
    path: '/api/v1/workflow/:workflowId/schedules',
    summary: 'Create a schedule',
    description:
      'A Temporal Schedule that starts a case of the workflow at each firing (cron or interval, in a time zone), with the given inputs, checked now as execute checks them. ' +
      `${managed} Answers the schedule and its next run times.`,
    tags,
    auth: true,
    params: workflowParams,
    body: createScheduleBodySchema,
    responses: {
      201: { description: 'Created', schema: scheduleDetailsSchema },
      ...errors,
      409: {
        description:
          'The workflow has no active version and none is pinned, or the workspace holds schedules.maxPerWorkspace schedules (metadata.limit)',
        schema: errorBodySchema,
      },
    },
    handler: async ({ auth, params, body, res }) => {
      res.status(201).json(scheduleDetailsView(await schedules.create(auth, params.workflowId, body)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/schedules',
    summary: 'List schedules',
    description:
      'Schedules newest first, a page at a time (cursor), in the workspaces the key reads with Workflow: Read; filters: workspaceId, workflowId.',
    tags,
    auth: true,
    query: scheduleListQuery,
    responses: { 200: { description: 'One page of schedules', schema: scheduleListSchema }, ...errors },
    handler: async ({ auth, query, res }) => {
      res.json(scheduleListView(await schedules.list(auth, query)));
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/schedules/:scheduleId',
    summary: 'A schedule, its next run times and its recent firings',
    description: 'Requires Workflow: Read. Failed firings (no case created) are listed with why.',
    tags,
    auth: true,
    params: scheduleParams,
    responses: { 200: { description: 'The schedule', schema: scheduleDetailsSchema }, ...errors },
    handler: async ({ auth, params, res }) => {
      res.json(scheduleDetailsView(await schedules.get(auth, params.scheduleId)));
    },
  });

  api.route({
    method: 'patch',
    path: '/api/v1/schedules/:scheduleId',
    summary: 'Change a schedule',
    description: `Any subset of the fields; null clears an optional one; cron or intervalSeconds replaces the other. ${managed} Re-creates the Temporal Schedule when Temporal lacks it.`,
    tags,
    auth: true,
    params: scheduleParams,
    body: updateScheduleBodySchema,
    responses: {
      200: { description: 'The schedule as changed', schema: scheduleDetailsSchema },
      ...errors,
      ...noActiveVersion,
    },
    handler: async ({ auth, params, body, res }) => {
      res.json(scheduleDetailsView(await schedules.update(auth, params.scheduleId, body)));
    },
  });

  api.route({
    method: 'delete',
    path: '/api/v1/schedules/:scheduleId',
    summary: 'Delete a schedule',
    description: `No more firings; cases already started run on. ${managed}`,
    tags,
    auth: true,
    params: scheduleParams,
    responses: { 204: { description: 'Deleted' }, ...errors },
    handler: async ({ auth, params, res }) => {
      await schedules.delete(auth, params.scheduleId);
      res.status(204).end();
    },
  });

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    api.route({
      method: 'post',
      path: `/api/v1/schedules/:scheduleId/${action}`,
      summary: paused ? 'Pause a schedule' : 'Resume a schedule',
      description: paused
        ? `No firing until resumed. ${managed}`
        : 'Fires again at its next time; times missed while paused do not run (backfill them). Requires Workflow: Full and Case: Full in the workflow’s workspace: resumed, the schedule makes cases.',
      tags,
      auth: true,
      params: scheduleParams,
      responses: {
        200: { description: 'The schedule', schema: scheduleDetailsSchema },
        ...errors,
        ...lacksSchedule,
      },
      handler: async ({ auth, params, res }) => {
        res.json(scheduleDetailsView(await schedules.pause(auth, params.scheduleId, paused)));
      },
    });
  }

  api.route({
    method: 'post',
    path: '/api/v1/schedules/:scheduleId/trigger',
    summary: 'Fire a schedule now',
    description:
      'One firing now, even while an earlier one runs (whatever the overlap policy) and while paused. Requires Case: Full. The case appears in recentFirings.',
    tags,
    auth: true,
    params: scheduleParams,
    responses: {
      202: { description: 'Fired' },
      ...errors,
      ...lacksSchedule,
    },
    handler: async ({ auth, params, res }) => {
      await schedules.trigger(auth, params.scheduleId);
      res.status(202).end();
    },
  });

  api.route({
    method: 'post',
    path: '/api/v1/schedules/:scheduleId/backfill',
    summary: 'Fire the times a schedule had in a past range',
    description:
      'Every firing time from startAt to endAt (both included) runs now, one after another, each case with the time it was for. Requires Case: Full. At most schedules.maxBackfillFirings (default 100) firings.',
    tags,
    auth: true,
    params: scheduleParams,
    body: backfillBodySchema,
    responses: {
      202: { description: 'Backfill started', schema: backfillStartedSchema },
      ...errors,
      ...lacksSchedule,
    },
    handler: async ({ auth, params, body, res }) => {
      const { firings } = await schedules.backfill(auth, params.scheduleId, body);
      res.status(202).json({ scheduleId: params.scheduleId, firings });
    },
  });
}
