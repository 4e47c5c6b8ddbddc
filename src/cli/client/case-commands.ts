import type { Command } from 'commander';
import { z } from 'zod';
import { clientAction, noOptions, pairs } from './command.js';
import { followToEnd, resultLines, results } from './case-watch.js';
import { exitCodes } from './errors.js';
import { collectPair, uploadFile, workflowInputs } from './inputs.js';
import { indent, show } from './output.js';
import { registerRerunCommands } from './rerun-commands.js';
import type { Session } from './session.js';

const status = (session: Session, caseId: string) =>
  session.call(session.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }));

/** The embedded Temporal UI (npm start) unless CASEFLOW_TEMPORAL_UI_URL says where the operator's one is. */
function temporalUiLink(caseId: string, fromService: string | null): string {
  if (fromService) return fromService;
  const base = (process.env.CASEFLOW_TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233').replace(/\/+$/, '');
  const namespace = process.env.CASEFLOW_TEMPORAL_NAMESPACE ?? 'default';
  return `${base}/namespaces/${namespace}/workflows/case-${caseId}`;
}

/** `caseflow case run|status|results|audit|watch|cancel|ui` (and `case rerun`: rerun-commands.ts). */
export function registerCaseCommands(program: Command): void {
  const cases = program.command('case').description('cases: run a workflow, follow it, read its results');

  clientAction(
    cases
      .command('run <workflow>')
      .description('start a case of a workflow (id or name) with its inputs')
      .option('-i, --input <name=value>', 'an input value (repeatable); typed by the workflow input', collectPair)
      .option('--file <name=path>', 'upload a local file as a file input (repeatable)', collectPair)
      .option('-w, --wait', 'follow the case to its end and print its results', false)
      .option('--title <title>', 'case title'),
    z.tuple([z.string(), z.object({ input: pairs, file: pairs, wait: z.boolean(), title: z.string().optional() })]),
    async ({ session, out }, [ref, opts]) => {
      const s = session();
      const workflow = await s.requireWorkflow(ref);
      const inputs = await workflowInputs(s, workflow.workflowId, opts.input);
      for (const [name, file] of opts.file ?? []) inputs[name] = await uploadFile(s, workflow.workflowId, file);
      const initiated = await s.call(
        s.client.POST('/api/v1/case', {
          body: { workflowId: workflow.workflowId, ...(opts.title ? { title: opts.title } : {}) },
        }),
      );
      const { caseId } = initiated;
      const executed = await s.call(
        s.client.POST('/api/v1/case/{caseId}/execute', { params: { path: { caseId } }, body: { inputs } }),
      );
      out.progress(`case ${caseId} started: ${workflow.name}, version ${executed.workflowVersionNumber}`);
      if (opts.wait) return followToEnd(s, out, caseId);
      out.result(executed, () => [`follow it: caseflow case watch ${caseId}`]);
    },
  );

  clientAction(
    cases.command('status <caseId>').description('where a case is'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [caseId]) => {
      const s = await status(session(), caseId);
      out.result(s, () => [
        `${s.caseId}  ${s.status}`,
        `workflow ${s.workflowId} version ${s.workflowVersionNumber}`,
        ...(s.currentNode ? [`running: ${s.currentNode.name}`] : []),
        ...(s.error ? [`error: ${s.error.message}`] : []),
        `created ${s.createdAt}${s.finishedAt ? `, finished ${s.finishedAt}` : ''}`,
      ]);
    },
  );

  clientAction(
    cases.command('results <caseId>').description('the results of a finished case'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [caseId]) => {
      const body = await results(session(), caseId);
      if (!('results' in body)) {
        out.result(body, () => ['not finished yet']);
        return exitCodes.notCompleted;
      }
      out.result(body, () => [body.status, ...resultLines(body)]);
    },
  );

  clientAction(
    cases.command('audit <caseId>').description('every node of a case: status, time, inputs, outputs, errors'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [caseId]) => {
      const s = session();
      const audit = await s.call(s.client.GET('/api/v1/case/{caseId}/audit', { params: { path: { caseId } } }));
      out.result(audit, () => [
        `${audit.caseId}  ${audit.status}  ${audit.nb_executed_nodes}/${audit.nb_nodes} nodes ran`,
        ...Object.values(audit.audit.nodes_execution_data).flatMap((n) => [
          `${n.node_name} (${n.handler_class}): ${n.status}, ${n.attempts} attempt(s)`,
          ...indent([
            ...(n.inputs ? [`inputs: ${show(n.inputs)}`] : []),
            ...(n.outputs ? [`outputs: ${show(n.outputs)}`] : []),
            ...(n.error ? [`error: ${n.error.message}`] : []),
            ...n.logs.map((l) => `${l.level}: ${l.message}`),
          ]),
        ]),
      ]);
    },
  );

  clientAction(
    cases.command('watch <caseId>').description('follow a case to its end and print its results'),
    z.tuple([z.string(), noOptions]),
    ({ session, out }, [caseId]) => followToEnd(session(), out, caseId),
  );

  clientAction(
    cases.command('cancel <caseId>').description('cancel a case'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [caseId]) => {
      const s = session();
      const cancelled = await s.call(s.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }));
      out.result(cancelled, () => [`${cancelled.caseId}  ${cancelled.status}`]);
    },
  );

  clientAction(
    cases.command('ui [caseId]').description("the Temporal UI page of a case's run (default: the newest case)"),
    z.tuple([z.string().optional(), noOptions]),
    async ({ session, out }, [given]) => {
      const s = session();
      let caseId = given;
      if (!caseId) {
        const page = await s.call(s.client.GET('/api/v1/case', { params: { query: { limit: 1 } } }));
        caseId = page.cases[0]?.caseId;
        if (!caseId) {
          out.result({ error: 'no case yet' }, () => ['no case yet']);
          return exitCodes.refused;
        }
      }
      const url = temporalUiLink(caseId, (await status(s, caseId)).temporalUiUrl);
      out.result({ caseId, temporalUiUrl: url }, () => [url]);
    },
  );

  registerRerunCommands(cases);
}
