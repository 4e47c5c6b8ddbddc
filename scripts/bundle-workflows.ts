import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../src/config/paths.js';
import { workflowFailureConverterPath } from '../src/temporal/data-converter.js';
import { workflowBundlePath } from '../src/temporal/worker.js';
import { preloadedWorkflowModules } from '../src/temporal/workflow-preload.js';
import { workflowTracingPath } from '../src/tracing/tracing.js';

/**
 * The bundle as the worker holds it, in its main thread and its workflow thread: the code in Latin-1 (one
 * character beyond it, a comment's arrow, makes V8 keep the whole string at two bytes per character) and
 * the inline source map, which the SDK requires, without the sources' text (stack traces map through its
 * `mappings`; the sources are in dist/). 2 MB → 1 MB.
 */
function slim(code: string): string {
  const comment = code.lastIndexOf('//# sourceMappingURL=data:');
  const data = code.indexOf('base64,', comment) + 'base64,'.length;
  if (comment < 0 || data < comment) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(code.slice(data), 'base64').toString()) as Record<string, unknown>;
  delete map.sourcesContent;
  // An escape means the same character in a string, a template, a regular expression or an identifier.
  const latin1 = code
    .slice(0, comment)
    .replace(/[\u0100-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${latin1}${code.slice(comment, data)}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

/** Builds the workflow bundle once, at build time, so a worker starts in about a second. */
async function main(): Promise<void> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(projectRoot, 'dist', 'workflows', 'index.js'),
    // A run's failure carries its message in an encrypted payload, as the worker's failures do.
    failureConverterPath: workflowFailureConverterPath,
    // Runs started with a trace context trace their workflow and activity calls; the others are untouched.
    workflowInterceptorModules: [workflowTracingPath],
    // Evaluated once per workflow context, not once per run: the modules that keep nothing of a run.
    preloadModules: preloadedWorkflowModules,
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  const code = slim(bundle.code);
  await mkdir(path.dirname(workflowBundlePath), { recursive: true });
  await writeFile(workflowBundlePath, code);
  console.log(
    `workflow bundle written to ${path.relative(projectRoot, workflowBundlePath)} (${Math.round(code.length / 1024)} KiB)`,
  );
}

await main();
