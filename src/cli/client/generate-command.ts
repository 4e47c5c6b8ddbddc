import type { Command } from 'commander';
import { z } from 'zod';
import { clientAction } from './command.js';
import { sleep } from './case-watch.js';
import { exitCodes } from './errors.js';
import { progressBar, type Output } from './output.js';
import type { Session } from './session.js';

async function followRun(session: Session, out: Output, workflowId: string, runId: string) {
  let last = '';
  for (;;) {
    const run = await session.call(
      session.client.GET('/api/v1/workflow/{workflowId}/run', {
        params: { path: { workflowId }, query: { runId } },
      }),
    );
    const line = progressBar(run.progress, run.text);
    // On a terminal the bar is redrawn in place; elsewhere each change is a line of its own.
    if (line !== last) {
      if (out.interactive) out.redraw(line);
      else out.progress(line);
      last = line;
    }
    if (run.status !== 'received' && run.status !== 'processing') {
      if (out.interactive) process.stdout.write('\n');
      return run;
    }
    await sleep(1000);
  }
}

/** `caseflow generate "PROMPT" [--wait]`. */
export function registerGenerateCommand(program: Command): void {
  clientAction(
    program
      .command('generate <prompt>')
      .description('generate a workflow from a prompt (a new, inactive workflow)')
      .option('--name <name>', 'the new workflow name')
      .option('-w, --wait', 'follow the run with a progress bar to its end', false),
    z.tuple([z.string(), z.object({ wait: z.boolean(), name: z.string().optional() })]),
    async ({ session, out }, [prompt, opts]) => {
      const s = session();
      const started = await s.call(
        s.client.POST('/api/v1/workflow/generate', {
          params: { header: { 'x-workspace-id': await s.workspaceId() } },
          body: { prompt, ...(opts.name ? { name: opts.name } : {}), fileUrls: [] },
        }),
      );
      out.progress(`generating workflow ${started.workflowId} (run ${started.runId})`);
      if (!opts.wait) {
        out.result(started, () => [`it runs on; later: caseflow workflow show ${started.workflowId}`]);
        return;
      }
      const run = await followRun(s, out, started.workflowId, started.runId);
      out.result(run, () => [
        `${run.status}: ${run.text}`,
        ...run.needs_attention.map((n) => `  needs attention: ${n}`),
        `see it: caseflow workflow show ${started.workflowId}`,
      ]);
      return run.status === 'completed' ? exitCodes.ok : exitCodes.notCompleted;
    },
  );
}
