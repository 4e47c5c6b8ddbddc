import type { Command } from 'commander';
import { clientAction } from './command.js';
import { resultLines, results, watchCase } from './case-watch.js';
import { exitCodes } from './errors.js';
import { collectPair, inputValue, uploadFile } from './inputs.js';
import { indent, show } from './output.js';
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

/** Waits for the end, prints the nodes as they run and the results; exit code 4 when it did not complete. */
async function followToEnd(session: Session, out: Parameters<typeof watchCase>[1], caseId: string) {
  const final = await watchCase(session, out, caseId);
  const body = await results(session, caseId);
  const values = 'results' in body ? body.results : {};
  out.result({ ...final, results: values }, () => [
    `${final.status}${final.error ? `: ${final.error.message}` : ''}`,
    ...resultLines({ results: values }),
  ]);
  return final.status === 'COMPLETED' ? exitCodes.ok : exitCodes.notCompleted;
}

/** `caseflow case run|status|results|audit|watch|cancel|ui`. */
export function registerCaseCommands(program: Command): void {
  const cases = program.command('case').description('cases: run a workflow, follow it, read its results');

  clientAction<
    [string, { input?: Array<[string, string]>; file?: Array<[string, string]>; wait: boolean; title?: string }]
  >(
    cases
      .command('run <workflow>')
      .description('start a case of a workflow (id or name) with its inputs')
      .option('-i, --input <name=value>', 'an input value (repeatable); typed by the workflow input', collectPair)
      .option('--file <name=path>', 'upload a local file as a file input (repeatable)', collectPair)
      .option('-w, --wait', 'follow the case to its end and print its results', false)
      .option('--title <title>', 'case title'),
    async ({ session, out }, ref, opts) => {
      const s = session();
      const workflow = await s.requireWorkflow(ref);
      const details = await s.call(
        s.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId: workflow.workflowId } } }),
      );
      const inputs: Record<string, unknown> = {};
      for (const [name, text] of opts.input ?? [])
        inputs[name] = inputValue(name, text, details.jobPayloadSchema[name]?.type);
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

  clientAction<[string]>(
    cases.command('status <caseId>').description('where a case is'),
    async ({ session, out }, caseId) => {
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

  clientAction<[string]>(
    cases.command('results <caseId>').description('the results of a finished case'),
    async ({ session, out }, caseId) => {
      const body = await results(session(), caseId);
      if (!('results' in body)) {
        out.result(body, () => ['not finished yet']);
        return exitCodes.notCompleted;
      }
      out.result(body, () => [body.status, ...resultLines(body)]);
    },
  );

  clientAction<[string]>(
    cases.command('audit <caseId>').description('every node of a case: status, time, inputs, outputs, errors'),
    async ({ session, out }, caseId) => {
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

  clientAction<[string]>(
    cases.command('watch <caseId>').description('follow a case to its end and print its results'),
    ({ session, out }, caseId) => followToEnd(session(), out, caseId),
  );

  clientAction<[string]>(
    cases.command('cancel <caseId>').description('cancel a case'),
    async ({ session, out }, caseId) => {
      const s = session();
      const cancelled = await s.call(s.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }));
      out.result(cancelled, () => [`${cancelled.caseId}  ${cancelled.status}`]);
    },
  );

  clientAction<[string | undefined]>(
    cases.command('ui [caseId]').description("the Temporal UI page of a case's run (default: the newest case)"),
    async ({ session, out }, given) => {
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
}
