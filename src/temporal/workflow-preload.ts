import path from 'node:path';
import { projectRoot } from '../config/paths.js';

/**
 * The workflow bundle's modules the SDK evaluates once per workflow context instead of once per run (the
 * bundler's `preloadModules`, scripts/bundle-workflows.ts). Each run in the reused V8 context has a module cache
 * of its own, so without this every run evaluated these 47 modules again. A preloaded module is shared by every
 * run of the context and deep-frozen after loading, and it is evaluated before any run exists. So each one listed
 * keeps nothing of a run: no module-level Map, Set or object filled after loading, no `let` reassigned, no global
 * or sticky RegExp (its `lastIndex` is state, and a frozen one throws on use), nothing that changes what it
 * exports, nothing read from Date, Math.random or workflowInfo() while loading. Their classes have no static
 * state; proxyActivities and defineQuery only describe what a run calls later.
 *
 * What a listed module imports is preloaded with it, so every module of ours the workflows reach is listed, each
 * checked against the rules above (test/tracing/workflow-bundle.test.ts fails on one shared without being listed).
 * The SDK freezes only what a module exports, not what it keeps to itself: test/nodes/replay-preloaded.test.ts
 * replays every recorded history in one context and compares what the exports hold after each run, and
 * test/workflow-logic/case-run.test.ts runs two cases of one graph in one worker at once.
 */
const preloaded = [
  'src/domain/case-graph.js',
  'src/domain/case-run-changes.js',
  'src/domain/case-scheduler.js',
  'src/domain/cases.js',
  'src/domain/generation/builds.js',
  'src/domain/generation/run-state.js',
  'src/domain/generation/run.js',
  'src/domain/human-tasks.js',
  'src/domain/last-node.js',
  'src/domain/node-kinds/call-workflow.js',
  'src/domain/node-kinds/condition-rules.js',
  'src/domain/node-kinds/condition.js',
  'src/domain/node-kinds/human-task.js',
  'src/domain/node-kinds/input.js',
  'src/domain/node-kinds/integration-action.js',
  'src/domain/node-kinds/kind.js',
  'src/domain/node-kinds/llm-agent.js',
  'src/domain/node-kinds/output.js',
  'src/domain/node-kinds/python-code.js',
  'src/domain/node-kinds/registry.js',
  'src/domain/node-slots.js',
  'src/domain/token-usage.js',
  'src/domain/vocabulary.js',
  'src/temporal/contracts/callback-delivery.js',
  'src/temporal/contracts/case-run.js',
  'src/temporal/contracts/contract.js',
  'src/temporal/contracts/generation-run.js',
  'src/temporal/contracts/oauth.js',
  'src/temporal/contracts/rerun-batch.js',
  'src/temporal/contracts/search-attributes.js',
  // The SDK requires the failure converter and the interceptors at every run's start.
  'src/temporal/workflow-failure-converter.js',
  // Temporal's OpenTelemetry interceptors stay per run: this module requires them inside a traced run.
  'src/tracing/workflow-interceptors.cjs',
  'workflows/callback-delivery.js',
  'workflows/case-run.js',
  'workflows/child-case.js',
  'workflows/connection-smoke-test.js',
  'workflows/generation-run.js',
  'workflows/human-tasks.js',
  'workflows/index.js',
  'workflows/node-turns.js',
  'workflows/oauth-authorization.js',
  'workflows/oauth-token-refresh.js',
  'workflows/rerun-batch.js',
  'workflows/retention-purge.js',
  'workflows/scheduled-case.js',
  'workflows/start-child.js',
];

/** The compiled modules, by path, as the bundler takes them. */
export const preloadedWorkflowModules = preloaded.map((file) => path.join(projectRoot, 'dist', file));
