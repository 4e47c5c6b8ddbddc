import type { Migration } from 'kysely';
import type { ConcurrentIndex } from './concurrent-index.js';
import * as tenancy from './001_tenancy.js';
import * as workflows from './010_workflows.js';
import * as cases from './011_cases.js';
import * as callbacks from './012_callbacks.js';
import * as files from './020_files.js';
import * as caseFileReads from './021_case_file_reads.js';
import * as codeNodes from './030_code_nodes.js';
import * as catalog from './040_catalog.js';
import * as catalogActionOrder from './041_catalog_action_order.js';
import * as connections from './045_connections.js';
import * as oauth from './046_oauth.js';
import * as discovery from './050_discovery.js';
import * as generation from './060_generation.js';
import * as rateLimits from './070_rate_limits.js';
import * as caseNodeUsage from './071_case_node_usage.js';
import * as listIndexes from './072_list_indexes.js';
import * as caseNodeClock from './073_case_node_clock.js';
import * as humanTasks from './080_human_tasks.js';
import * as schedules from './082_schedules.js';
import * as hooks from './084_hooks.js';
import * as caseReruns from './086_case_reruns.js';
import * as childCases from './088_child_cases.js';
import * as eventSubscriptions from './090_event_subscriptions.js';
import * as retention from './090_retention.js';
import * as concurrency from './100_concurrency.js';
import * as generationRunsStarted from './106_generation_runs_started.js';
import * as casesStatusIndex from './112_cases_status_index.js';
import * as caseCallTrees from './118_case_call_trees.js';
import * as casesStartedIndex from './124_cases_started_index.js';
import * as callbackDeliveriesDueIndex from './125_callback_deliveries_due_index.js';
import * as processLoads from './127_process_loads.js';
import * as actingKeys from './131_acting_keys.js';

/**
 * Every migration, by name; names sort in the order they apply. Each area
 * adds its own file and one line here.
 */
export const migrations: Record<string, Migration> = {
  '001_tenancy': tenancy,
  '010_workflows': workflows,
  '011_cases': cases,
  '012_callbacks': callbacks,
  '020_files': files,
  '021_case_file_reads': caseFileReads,
  '030_code_nodes': codeNodes,
  '040_catalog': catalog,
  '041_catalog_action_order': catalogActionOrder,
  '045_connections': connections,
  '046_oauth': oauth,
  '050_discovery': discovery,
  '060_generation': generation,
  '070_rate_limits': rateLimits,
  '071_case_node_usage': caseNodeUsage,
  '072_list_indexes': listIndexes,
  '073_case_node_clock': caseNodeClock,
  '080_human_tasks': humanTasks,
  '082_schedules': schedules,
  '084_hooks': hooks,
  '086_case_reruns': caseReruns,
  '088_child_cases': childCases,
  '090_event_subscriptions': eventSubscriptions,
  '090_retention': retention,
  '100_concurrency': concurrency,
  '106_generation_runs_started': generationRunsStarted,
  '112_cases_status_index': casesStatusIndex,
  '118_case_call_trees': caseCallTrees,
  '124_cases_started_index': casesStartedIndex,
  '125_callback_deliveries_due_index': callbackDeliveriesDueIndex,
  '127_process_loads': processLoads,
  '131_acting_keys': actingKeys,
};

/**
 * Indexes on tables that may be large when their migration runs: built CONCURRENTLY on Postgres once the migrations
 * have committed (concurrent-index.ts). A new one: a migration made with concurrentIndexMigration, and one entry here.
 */
export const concurrentIndexes: readonly ConcurrentIndex[] = [
  casesStatusIndex.casesStatus,
  caseCallTrees.casesRoot,
  casesStartedIndex.casesStarted,
  callbackDeliveriesDueIndex.callbackDeliveriesDue,
];
