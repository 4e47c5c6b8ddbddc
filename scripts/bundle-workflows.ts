import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { projectRoot } from '../src/config/paths.js';
import { workflowBundlePath } from '../src/temporal/worker.js';

/** Builds the workflow bundle once, at build time, so a worker starts in about a second. */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(projectRoot, 'dist', 'workflows', 'index.js'),
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  await mkdir(path.dirname(workflowBundlePath), { recursive: true });
  await writeFile(workflowBundlePath, code);
  console.log(
    `workflow bundle written to ${path.relative(projectRoot, workflowBundlePath)} (${Math.round(code.length / 1024)} KiB)`,
  );
}

await main();
