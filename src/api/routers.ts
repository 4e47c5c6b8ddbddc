import type { AppContext } from '../context.js';
import { registerAdminRoutes } from './admin.routes.js';
import type { ApiRoutes } from './route.js';
import { registerCodeRoutes } from './code.routes.js';
import { registerSystemRoutes } from './system.routes.js';
import { registerFileRoutes } from './file.routes.js';
import { registerMeRoutes } from './me.routes.js';
import { registerCallbackRoutes } from './callback.routes.js';
import { registerSubscriptionRoutes } from './subscription.routes.js';
import { registerRetentionRoutes } from './retention.routes.js';
import { registerConcurrencyRoutes } from './concurrency.routes.js';
import { registerWorkflowRoutes } from './workflow.routes.js';
import { registerCaseRoutes } from './case.routes.js';
import { registerJobRoutes } from './job.routes.js';
import { registerRerunBatchRoutes } from './rerun-batch.routes.js';
import { registerCatalogRoutes } from './catalog.routes.js';
import { registerDiscoveryRoutes } from './discovery.routes.js';
import { registerGenerationRoutes } from './generation.routes.js';
import { registerConnectionRoutes } from './connection.routes.js';
import { registerOAuthRoutes } from './oauth.routes.js';
import { registerTemporalCodecRoutes } from './temporal-codec.routes.js';
import { registerTaskRoutes } from './task.routes.js';
import { registerScheduleRoutes } from './schedule.routes.js';
import { registerHookRoutes } from './hook.routes.js';

/** Every resource's routes; each resource adds one line. */
export const routeRegistrations: Array<(api: ApiRoutes, ctx: AppContext) => void> = [
  registerSystemRoutes,
  registerAdminRoutes,
  registerMeRoutes,
  registerCallbackRoutes,
  registerSubscriptionRoutes,
  registerGenerationRoutes,
  registerWorkflowRoutes,
  registerFileRoutes,
  registerCodeRoutes,
  registerCaseRoutes,
  registerScheduleRoutes,
  registerRerunBatchRoutes,
  registerRetentionRoutes,
  registerConcurrencyRoutes,
  registerJobRoutes,
  registerCatalogRoutes,
  registerDiscoveryRoutes,
  registerConnectionRoutes,
  registerOAuthRoutes,
  registerTemporalCodecRoutes,
  registerTaskRoutes,
  registerHookRoutes,
];
