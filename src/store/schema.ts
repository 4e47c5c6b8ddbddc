import type { TenancyTables } from './tables/tenancy.js';
import type { WorkflowTables } from './tables/workflows.js';
import type { CallbackTables } from './tables/callbacks.js';
import type { FileTables } from './tables/files.js';
import type { CaseTables } from './tables/cases.js';
import type { CodeNodeTables } from './tables/code-nodes.js';
import type { CatalogTables } from './tables/catalog.js';
import type { DiscoveryTables } from './tables/discovery.js';
import type { ConnectionTables } from './tables/connections.js';
import type { GenerationTables } from './tables/generation.js';
import type { RateLimitTables } from './tables/rate-limits.js';
import type { TaskTables } from './tables/tasks.js';
import type { ScheduleTables } from './tables/schedules.js';
import type { HookTables } from './tables/hooks.js';
import type { SubscriptionTables } from './tables/subscriptions.js';
import type { RetentionTables } from './tables/retention.js';
import type { ConcurrencyTables } from './tables/concurrency.js';

/** Every table of the store; each area adds its tables interface here. */
export interface Database
  extends
    TenancyTables,
    WorkflowTables,
    CallbackTables,
    FileTables,
    CaseTables,
    CodeNodeTables,
    CatalogTables,
    DiscoveryTables,
    GenerationTables,
    ConnectionTables,
    RateLimitTables,
    TaskTables,
    ScheduleTables,
    HookTables,
    SubscriptionTables,
    RetentionTables,
    ConcurrencyTables {}
