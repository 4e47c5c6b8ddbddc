import { Option, type Command } from 'commander';
import { z } from 'zod';
import { caseStatuses, rerunFroms, rerunVersions } from '../../domain/cases.js';
import { followToEnd, sleep } from './case-watch.js';
import { clientAction, pairs } from './command.js';
import { CliError, exitCodes } from './errors.js';
import { collectPair, workflowInputs } from './inputs.js';
import { progressBar, type Output } from './output.js';
import type { Session } from './session.js';

const rerunOptions = z.object({
  from: z.enum(rerunFroms),
  version: z.enum(rerunVersions),
  input: pairs,
  wait: z.boolean(),
  status: z.enum(caseStatuses).optional(),
  workflow: z.string().optional(),
  since: z.string().optional(),
  until: z.string().optional(),
});
type RerunOptions = z.output<typeof rerunOptions>;

type Batch = Awaited<ReturnType<typeof batchProgress>>;
const batchProgress = (session: Session, batchId: string) =>
  session.call(session.client.GET('/api/v1/case/rerun/{batchId}', { params: { path: { batchId } } }));

const batchLines = (b: Batch) => [
  `batch ${b.batchId}  ${b.status}: ${b.matched} matched, ${b.started} started, ${b.skipped} skipped, ${b.failed} failed, ${b.pending} pending`,
  ...b.skippedCases.map((c) => `  skipped ${c.caseId}: ${c.reason}`),
  ...b.failedCases.map((c) => `  failed ${c.caseId}: ${c.reason}`),
  ...(b.error ? [`error: ${b.error}`] : []),
];

/** Follows a bulk rerun to its end with a progress bar (gone-through over matched). */
async function followBatch(session: Session, out: Output, first: Batch) {
  let batch = first;
  let last = '';
  for (;;) {
    const done = batch.matched === 0 ? 1 : (batch.matched - batch.pending) / batch.matched;
    const line = progressBar(done, `${batch.started} started, ${batch.skipped} skipped, ${batch.failed} failed`);
    if (line !== last) {
      if (out.interactive) out.redraw(line);
      else out.progress(line);
      last = line;
    }
    if (batch.status !== 'RUNNING') break;
    await sleep(500);
    batch = await batchProgress(session, batch.batchId);
  }
  if (out.interactive) process.stdout.write('\n');
  out.result(batch, () => batchLines(batch));
  return batch.status === 'COMPLETED' && batch.failed === 0 ? exitCodes.ok : exitCodes.notCompleted;
}

async function rerunOne(session: Session, out: Output, caseId: string, opts: RerunOptions) {
  const original = await session.call(
    session.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }),
  );
  const inputs = await workflowInputs(session, original.workflowId, opts.input);
  const started = await session.call(
    session.client.POST('/api/v1/case/{caseId}/rerun', {
      params: { path: { caseId } },
      body: { from: opts.from, version: opts.version, ...(opts.input?.length ? { inputs } : {}) },
    }),
  );
  out.progress(
    `case ${started.caseId} started: rerun of ${caseId} from ${started.rerunFrom}, version ${started.workflowVersionNumber}`,
  );
  if (opts.wait) return followToEnd(session, out, started.caseId);
  out.result(started, () => [`follow it: caseflow case watch ${started.caseId}`]);
}

async function rerunMany(session: Session, out: Output, opts: RerunOptions) {
  if (opts.input?.length) throw new CliError('--input reruns one case: give its id', exitCodes.usage);
  const workflowId = opts.workflow ? (await session.requireWorkflow(opts.workflow)).workflowId : undefined;
  const filter = { workflowId, status: opts.status, from: opts.since, to: opts.until };
  const batch = await session.call(
    session.client.POST('/api/v1/case/rerun', { body: { filter, from: opts.from, version: opts.version } }),
  );
  out.progress(`batch ${batch.batchId} started: ${batch.matched} case(s) matched`);
  if (opts.wait) return followBatch(session, out, batch);
  out.result(batch, () => [`follow it: caseflow case rerun-batch ${batch.batchId} --wait`]);
}

/** `caseflow case rerun [CASE]` (one case, or every case a filter matches) and `case rerun-batch BATCH`. */
export function registerRerunCommands(cases: Command): void {
  clientAction(
    cases
      .command('rerun [caseId]')
      .description(
        'rerun a case as a new case; without a case id, every case --status/--workflow/--since/--until match',
      )
      .addOption(
        new Option('--from <from>', 'start: every node again; failed: from the failed node')
          .choices(rerunFroms)
          .default('start'),
      )
      .addOption(
        new Option('--version <version>', 'the version the case ran, or the latest active one')
          .choices(rerunVersions)
          .default('original'),
      )
      .option('-i, --input <name=value>', 'an input over the original ones (repeatable; one case only)', collectPair)
      .option('-w, --wait', 'follow the rerun (or the batch) to its end', false)
      .addOption(new Option('--status <status>', 'bulk: cases with this status').choices(caseStatuses))
      .option('--workflow <workflow>', 'bulk: cases of this workflow (id or name)')
      .option('--since <time>', 'bulk: cases created at or after this ISO time')
      .option('--until <time>', 'bulk: cases created before this ISO time'),
    z.tuple([z.string().optional(), rerunOptions]),
    async ({ session, out }, [caseId, opts]) => {
      const bulk = opts.status ?? opts.workflow ?? opts.since ?? opts.until;
      if (caseId && bulk !== undefined)
        throw new CliError(
          'give a case id or filters (--status, --workflow, --since, --until), not both',
          exitCodes.usage,
        );
      if (!caseId && bulk === undefined)
        throw new CliError(
          'give a case id, or filters for a bulk rerun (--status, --workflow, --since, --until)',
          exitCodes.usage,
        );
      return caseId ? rerunOne(session(), out, caseId, opts) : rerunMany(session(), out, opts);
    },
  );

  clientAction(
    cases
      .command('rerun-batch <batchId>')
      .description('progress of a bulk rerun: matched, started, skipped and failed cases')
      .option('-w, --wait', 'follow it to its end with a progress bar', false)
      .option('--cancel', 'stop it before its next case', false),
    z.tuple([z.string(), z.object({ wait: z.boolean(), cancel: z.boolean() })]),
    async ({ session, out }, [batchId, opts]) => {
      const s = session();
      const batch = opts.cancel
        ? await s.call(s.client.POST('/api/v1/case/rerun/{batchId}/cancel', { params: { path: { batchId } } }))
        : await batchProgress(s, batchId);
      if (opts.wait) return followBatch(s, out, batch);
      out.result(batch, () => batchLines(batch));
    },
  );
}
