import { CallbackRepo } from './callback-repo.js';
import { CatalogRepo } from './catalog-repo.js';
import { CaseRepo } from './case-repo.js';
import { CodeNodeRepo } from './code-node-repo.js';
import { ConnectionRepo } from './connection-repo.js';
import type { Db } from './database.js';
import { DiscoveryRepo } from './discovery-repo.js';
import { FileRepo } from './file-repo.js';
import { GenerationRepo } from './generation-repo.js';
import { OAuthRepo } from './oauth-repo.js';
import { RateLimitRepo } from './rate-limit-repo.js';
import { TaskRepo } from './task-repo.js';
import { ScheduleRepo } from './schedule-repo.js';
import { IdempotencyRepo } from './idempotency-repo.js';
import { HookRepo } from './hook-repo.js';
import { RerunBatchRepo } from './rerun-batch-repo.js';
import { SubscriptionRepo } from './subscription-repo.js';
import { RetentionRepo } from './retention-repo.js';
import { AdmissionRepo } from './admission-repo.js';
import { ProcessLoadRepo } from './process-load-repo.js';
import { TenancyRepo } from './tenancy-repo.js';
import { WorkflowRepo } from './workflow-repo.js';

/** Every repository over one database handle, built once by the composition root; a new area adds one line. */
export function createRepositories(db: Db) {
  return {
    tenancy: new TenancyRepo(db),
    workflows: new WorkflowRepo(db),
    cases: new CaseRepo(db),
    files: new FileRepo(db),
    codeNodes: new CodeNodeRepo(db),
    callbacks: new CallbackRepo(db),
    catalog: new CatalogRepo(db),
    discovery: new DiscoveryRepo(db),
    generation: new GenerationRepo(db),
    connections: new ConnectionRepo(db),
    oauth: new OAuthRepo(db),
    rateLimits: new RateLimitRepo(db),
    tasks: new TaskRepo(db),
    schedules: new ScheduleRepo(db),
    idempotency: new IdempotencyRepo(db),
    hooks: new HookRepo(db),
    rerunBatches: new RerunBatchRepo(db),
    subscriptions: new SubscriptionRepo(db),
    retention: new RetentionRepo(db),
    admission: new AdmissionRepo(db),
    processLoads: new ProcessLoadRepo(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
