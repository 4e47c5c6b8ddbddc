import { performance } from 'node:perf_hooks';
import { scenarios } from './chaos-scenarios.js';
import { passed, tableHeader, tableRow, type ScenarioResult } from './chaos-verdict.js';

/**
 * `npm run chaos`: the service started from nothing with cases flowing, one
 * fault injected per scenario, every case checked (docs/running.md). Pass
 * numbers to run a subset: `npm run chaos -- 1 3`. Exits 1 when a scenario
 * lost, repeated or miscomputed a case.
 */
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!scenarios[name]) {
    console.error(`unknown scenario "${name}"; choose from: ${Object.keys(scenarios).join(', ')}`);
    process.exit(2);
  }
}
const startedAt = performance.now();
const results: ScenarioResult[] = [];
for (const [name, run] of Object.entries(scenarios)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const result = await run();
  results.push(result);
  console.log([...tableHeader, tableRow(result)].join('\n'));
  console.log(`chaos: scenario ${name} took ${result.seconds.toFixed(0)} s`);
}
console.log(`\nchaos: all scenarios (${((performance.now() - startedAt) / 1000).toFixed(0)} s)`);
console.log([...tableHeader, ...results.map(tableRow)].join('\n'));
process.exit(results.every(passed) ? 0 : 1);
