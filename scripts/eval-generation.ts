import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { projectRoot } from '../src/config/paths.js';
import { createLogger } from '../src/logging/logger.js';
import { freePort } from '../src/net/free-port.js';
import { startService } from '../src/service.js';
import type { BootstrapResult } from '../src/tenancy/tenancy-service.js';

/**
 * npm run eval:generation — runs the prompt set in scripts/generation-prompts.json
 * through a fresh service (its own data directory; the embedded Temporal dev
 * server unless TEMPORAL_ADDRESS is set) against the configured LLM
 * (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL) or the offline planner, over HTTP as
 * a caller would, and prints the shares the generation issue asks for.
 */
/** What a workflow built as asked has (see the prompt file's description). */
interface Expectation {
  inputs?: Record<string, string>;
  conditions?: number;
  steps?: string[];
}

interface EvalPrompt {
  domain: string;
  process: boolean;
  prompt: string;
  expect?: Expectation;
}

interface GraphNode {
  name: string;
  handler_class: string;
  output_schema?: { schema: Record<string, { variable_name: string; allowed_types: Array<{ type: string }> }> };
}

/** What the applied graph lacks of what the prompt asked for; empty when it has everything expected. */
function missing(expect: Expectation | undefined, nodes: GraphNode[]): string[] {
  if (!expect) return [];
  const inputNode = nodes.find((n) => n.handler_class === 'input');
  const inputs = Object.values(inputNode?.output_schema?.schema ?? {});
  const steps = nodes.filter((n) => n.handler_class !== 'input' && n.handler_class !== 'output');
  const lacks: string[] = [];
  for (const [name, type] of Object.entries(expect.inputs ?? {})) {
    if (!inputs.some((i) => i.variable_name.includes(name) && i.allowed_types.some((t) => t.type === type)))
      lacks.push(`input ${name}: ${type}`);
  }
  const conditions = steps.filter((n) => n.handler_class === 'condition').length;
  if (conditions < (expect.conditions ?? 0)) lacks.push(`${expect.conditions} condition(s), found ${conditions}`);
  for (const word of expect.steps ?? []) {
    if (!steps.some((n) => n.name.toLowerCase().includes(word))) lacks.push(`a step "${word}"`);
  }
  return lacks;
}

interface RunResult {
  status: string;
  elapsed_ms: number;
  usage: { total_tokens: number };
  applied_versions: Array<{ stage: string }>;
  needs_attention: string[];
  planner: string;
}

async function main(): Promise<void> {
  const { prompts } = JSON.parse(
    readFileSync(path.join(projectRoot, 'scripts', 'generation-prompts.json'), 'utf8'),
  ) as { prompts: EvalPrompt[] };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-eval-'));
  const config = loadConfig(process.env, {
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logLevel: process.env.LOG_LEVEL ?? 'silent',
    temporal: { devServer: { port: await freePort(), uiPort: await freePort() }, workerMetricsPort: 0 },
    generation: { rateLimitMax: 1_000_000 },
  });
  let bootstrap: BootstrapResult | undefined;
  const service = await startService({
    config,
    logger: createLogger(config.logLevel),
    role: 'all',
    onBootstrap: (b) => (bootstrap = b),
  });
  try {
    if (!bootstrap || !service.url) throw new Error('the evaluation needs a fresh store and an API');
    const headers = {
      'content-type': 'application/json',
      'x-service-key': bootstrap.key.key,
      'x-workspace-id': bootstrap.workspace.id,
    };
    const base = service.url;
    const runOne = async (item: EvalPrompt): Promise<{ run: RunResult; lacks: string[] }> => {
      const started = await fetch(`${base}/api/v1/workflow/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prompt: item.prompt }),
      });
      const body = (await started.json()) as { workflowId: string };
      if (started.status !== 202) throw new Error(`start failed (${started.status}): ${JSON.stringify(body)}`);
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        const run = (await (
          await fetch(`${base}/api/v1/workflow/${body.workflowId}/run`, { headers })
        ).json()) as RunResult;
        if (['received', 'processing'].includes(run.status)) continue;
        if (run.status !== 'completed') return { run, lacks: [] };
        const workflow = (await (await fetch(`${base}/api/v1/workflow/${body.workflowId}`, { headers })).json()) as {
          nodes: Record<string, GraphNode>;
        };
        return { run, lacks: missing(item.expect, Object.values(workflow.nodes)) };
      }
    };
    const results: Array<{ item: EvalPrompt; run: RunResult; lacks: string[] }> = [];
    const queue = [...prompts];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let item = queue.shift(); item; item = queue.shift()) results.push({ item, ...(await runOne(item)) });
      }),
    );
    results.sort((a, b) => prompts.indexOf(a.item) - prompts.indexOf(b.item));
    for (const { item, run, lacks } of results) {
      const note =
        (run.needs_attention.length > 0 ? ` (needs attention: ${run.needs_attention.join('; ').slice(0, 100)})` : '') +
        (lacks.length > 0 ? ` WRONGLY COMPLETED, lacks: ${lacks.join('; ')}` : '');
      console.log(
        `${run.status.padEnd(10)} ${String(run.elapsed_ms).padStart(6)} ms ${String(run.usage.total_tokens).padStart(6)} tok  [${item.domain}] ${item.prompt.slice(0, 70)}${note}`,
      );
    }
    const processRuns = results.filter((r) => r.item.process);
    const share = (n: number, of: number) => `${n}/${of} (${of === 0 ? 0 : Math.round((100 * n) / of)}%)`;
    const validated = processRuns.filter((r) => r.run.applied_versions.some((v) => v.stage === 'final')).length;
    const dryRan = processRuns.filter((r) => r.run.status === 'completed').length;
    const triaged = results.filter((r) => (r.run.status === 'irrelevant') === !r.item.process).length;
    const completed = processRuns.filter((r) => r.run.status === 'completed');
    const asAsked = completed.filter((r) => r.lacks.length === 0).length;
    const partial = processRuns.filter((r) => r.run.status === 'partial');
    const named = partial.filter((r) => r.run.needs_attention.length > 0).length;
    const nonProcess = results.filter((r) => !r.item.process);
    const recognised = nonProcess.filter((r) => r.run.status === 'irrelevant').length;
    const missedProcesses = processRuns.filter((r) => r.run.status === 'irrelevant').length;
    const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
    console.log('');
    console.log(
      `planner: ${results[0]?.run.planner ?? 'none'}; prompts: ${prompts.length} (${processRuns.length} processes, ${prompts.length - processRuns.length} not)`,
    );
    console.log(`validates (a final version applied): ${share(validated, processRuns.length)} of process prompts`);
    console.log(`dry-runs (completed):                ${share(dryRan, processRuns.length)} of process prompts`);
    console.log(`irrelevant detected correctly:       ${share(triaged, results.length)} of all prompts`);
    console.log(
      `runnable as asked (completed, nothing lacking): ${share(asAsked, processRuns.length)} of process prompts`,
    );
    console.log(
      `partial with the reason named (needs_attention): ${share(named, processRuns.length)} (partial without: ${partial.length - named})`,
    );
    console.log(`wrongly completed (must be 0):       ${completed.length - asAsked}`);
    console.log(`processes called irrelevant (must be 0): ${missedProcesses}`);
    console.log(`irrelevant recognised:               ${share(recognised, nonProcess.length)} of non-process prompts`);
    console.log(
      `mean time per run: ${Math.round(mean(results.map((r) => r.run.elapsed_ms)))} ms; mean tokens per run: ${Math.round(mean(results.map((r) => r.run.usage.total_tokens)))}`,
    );
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
