import { InvalidArgumentError, Option, type Command } from 'commander';
import { z } from 'zod';
import { overlapPolicies } from '../../domain/schedules.js';
import { clientAction, noOptions, pairs } from './command.js';
import { CliError, exitCodes } from './errors.js';
import { collectPair, workflowInputs } from './inputs.js';
import { indent, show } from './output.js';
import type { Session } from './session.js';

type Details = Awaited<ReturnType<typeof details>>;
type Stored = Omit<
  Details,
  'inEngine' | 'note' | 'nextRunTimes' | 'runningFirings' | 'skippedOverlap' | 'missedCatchupWindow' | 'recentFirings'
>;

const details = (session: Session, scheduleId: string) =>
  session.call(session.client.GET('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } }));

const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `5m`, `2h`, `1d` as seconds. */
function intervalSeconds(text: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * (units[match[2] || 's'] ?? 1) : 0;
  if (!(seconds > 0)) throw new InvalidArgumentError(`"${text}": write seconds, or a number with s, m, h or d (5m)`);
  return seconds;
}

const when = (s: Stored) => (s.cron ? `cron "${s.cron}" ${s.timeZone}` : `every ${s.intervalSeconds ?? '?'} s`);
const line = (s: Stored) =>
  `${s.scheduleId}  ${s.paused ? 'paused ' : 'active '}  ${when(s)}  workflow ${s.workflowId}${s.title ? `  "${s.title}"` : ''}`;

const detailLines = (s: Details) => [
  line(s),
  ...(Object.keys(s.inputs).length ? [`inputs: ${show(s.inputs)}`] : []),
  `overlap ${s.overlap}; Temporal schedule ${s.temporalScheduleId}${s.inEngine ? '' : ' (missing in Temporal: change it to re-create it)'}`,
  ...(s.note ? [`note: ${s.note}`] : []),
  'next runs:',
  ...indent(s.nextRunTimes),
  'recent firings:',
  ...indent(
    s.recentFirings.map(
      (f) =>
        `${f.scheduledAt}  ${f.status}${f.caseId ? `  case ${f.caseId} ${f.caseStatus ?? ''}` : ''}${f.error ? `  ${f.error}` : ''}`,
    ),
  ),
];

/** `caseflow schedule create|list|show|pause|resume|trigger|delete`: cases started by a Temporal Schedule. */
export function registerScheduleCommands(program: Command): void {
  const schedules = program
    .command('schedule')
    .description('schedules: start cases of a workflow on a cron or interval');

  clientAction(
    schedules
      .command('create <workflow>')
      .description('fire a case of the workflow (id or name) on a cron expression or every interval')
      .option('--cron <expr>', 'five-field cron expression (minute hour day-of-month month day-of-week)')
      .option('--every <interval>', 'an interval: seconds, or 30s, 5m, 2h, 1d', intervalSeconds)
      .option('--time-zone <tz>', 'IANA time zone of the cron expression', 'UTC')
      .option(
        '-i, --input <name=value>',
        'an input of every case (repeatable); typed by the workflow input',
        collectPair,
      )
      .option('--title <title>', "the cases' title")
      .addOption(
        new Option('--overlap <policy>', 'when a firing finds the previous case running')
          .choices(overlapPolicies)
          .default('skip'),
      )
      .option('--paused', 'create it paused', false),
    z.tuple([
      z.string(),
      z.object({
        cron: z.string().optional(),
        every: z.number().optional(),
        timeZone: z.string(),
        input: pairs,
        title: z.string().optional(),
        overlap: z.enum(overlapPolicies),
        paused: z.boolean(),
      }),
    ]),
    async ({ session, out }, [ref, opts]) => {
      if ((opts.cron === undefined) === (opts.every === undefined))
        throw new CliError('give one of --cron and --every', exitCodes.usage);
      const s = session();
      const { workflowId } = await s.requireWorkflow(ref);
      const inputs = await workflowInputs(s, workflowId, opts.input);
      const created = await s.call(
        s.client.POST('/api/v1/workflow/{workflowId}/schedules', {
          params: { path: { workflowId } },
          body: {
            ...(opts.cron === undefined
              ? { intervalSeconds: opts.every }
              : { cron: opts.cron, timeZone: opts.timeZone }),
            inputs,
            title: opts.title,
            overlap: opts.overlap,
            paused: opts.paused,
          },
        }),
      );
      out.result(created, () => detailLines(created));
    },
  );

  clientAction(
    schedules
      .command('list')
      .description('schedules the key reads, newest first')
      .option('--workflow <workflow>', 'only schedules of this workflow (id or name)'),
    z.tuple([z.object({ workflow: z.string().optional() })]),
    async ({ session, out }, [opts]) => {
      const s = session();
      const workflowId = opts.workflow ? (await s.requireWorkflow(opts.workflow)).workflowId : undefined;
      const page = await s.call(s.client.GET('/api/v1/schedules', { params: { query: { workflowId, limit: 100 } } }));
      out.result(page.items, () => (page.items.length ? page.items.map(line) : ['no schedules']));
    },
  );

  clientAction(
    schedules.command('show <scheduleId>').description('a schedule, its next run times and its recent firings'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [scheduleId]) => {
      const found = await details(session(), scheduleId);
      out.result(found, () => detailLines(found));
    },
  );

  for (const action of ['pause', 'resume'] as const) {
    clientAction(
      schedules
        .command(`${action} <scheduleId>`)
        .description(
          action === 'pause' ? 'no firing until resumed' : 'fire again from its next time (missed times do not run)',
        ),
      z.tuple([z.string(), noOptions]),
      async ({ session, out }, [scheduleId]) => {
        const s = session();
        const params = { params: { path: { scheduleId } } };
        const changed = await s.call(
          action === 'pause'
            ? s.client.POST('/api/v1/schedules/{scheduleId}/pause', params)
            : s.client.POST('/api/v1/schedules/{scheduleId}/resume', params),
        );
        out.result(changed, () => [line(changed)]);
      },
    );
  }

  clientAction(
    schedules.command('trigger <scheduleId>').description('fire it once now'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [scheduleId]) => {
      const s = session();
      await s.send(s.client.POST('/api/v1/schedules/{scheduleId}/trigger', { params: { path: { scheduleId } } }));
      out.result({ scheduleId, fired: true }, () => [`fired: caseflow schedule show ${scheduleId}`]);
    },
  );

  clientAction(
    schedules.command('delete <scheduleId>').description('no more firings; cases already started run on'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [scheduleId]) => {
      const s = session();
      await s.send(s.client.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } }));
      out.result({ scheduleId, deleted: true }, () => [`deleted ${scheduleId}`]);
    },
  );
}
