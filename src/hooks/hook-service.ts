import { assertWorkspaceGrant } from '../auth/access.js';
import { actingKeyAfter, startsNothing, type InertFields } from '../auth/acting-key.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import type { Grant } from '../domain/grants.js';
import { generateWebhookSecret } from '../callbacks/signing.js';
import { inputVariables, validateCaseInputs } from '../cases/case-inputs.js';
import type { CaseEnds } from '../cases/case-ends.js';
import type { CaseService } from '../cases/case-service.js';
import type { WorkflowService } from '../definitions/workflow-service.js';
import type { CaseResults } from '../domain/cases.js';
import type { HookMapping, HookMode, HookScheme } from '../domain/hooks.js';
import { DomainError, type FieldProblem } from '../errors.js';
import type { Answer, IdempotentRequests } from '../idempotency/idempotent-requests.js';
import type { Quota } from '../rate-limits/rate-limiter.js';
import type { CaseRecord } from '../domain/case-records.js';
import type { HookRecord } from '../domain/hooks.js';
import type { HookChanges, HookRepo } from '../store/hook-repo.js';
import { decodeCursor } from '../store/paging.js';
import type { Page } from '../domain/page.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';
import type { HookSecrets } from './hook-secrets.js';
import { describeSource, mapDelivery } from './mapping.js';
import { verifyDelivery, type SignedDelivery } from './signatures.js';

/** A hook as its creator asks for it (the API schema fills the defaults). */
export type HookDraft = HookSettings &
  ({ scheme: Exclude<HookScheme, 'hmac-sha256'> } | { scheme: 'hmac-sha256'; signatureHeader: string });

interface HookSettings {
  name: string;
  mapping?: HookMapping;
  mode: HookMode;
  syncTimeoutMs: number;
  toleranceSeconds: number;
  rateLimitPerMinute: number;
  enabled: boolean;
}

/** A hook with its secret in clear: only in the answer to its creation or rotation. */
export interface HookWithSecret {
  hook: HookRecord;
  secret: string;
}

/** What a delivery came to: a started case, or (sync hooks) one that ended within the bound. */
export type DeliveryOutcome =
  { kind: 'accepted'; record: CaseRecord } | { kind: 'finished'; record: CaseRecord; results: CaseResults };

export interface HookServiceDeps {
  repo: HookRepo;
  workflows: Pick<WorkflowRepo, 'findWorkflowByIdOrEntityId'>;
  definitions: Pick<WorkflowService, 'resolveForRun'>;
  cases: Pick<CaseService, 'initiate' | 'execute' | 'results' | 'cancel'>;
  secrets: HookSecrets;
  authentication: Pick<KeyAuthentication, 'actingFor'>;
  idempotency: IdempotentRequests;
  /** Hooks one workspace may hold (hooks.maxPerWorkspace). */
  maxPerWorkspace: number;
  /** Case ends recorded in this process: a sync delivery reads the results at once instead of at its next poll. */
  caseEnds: Pick<CaseEnds, 'watch'>;
  now?: () => number;
}

const RATE_WINDOW_MS = 60_000;

/** A new name, or disabling a hook, starts nothing (startsNothing). */
const inert: InertFields<HookChanges> = { name: 'name', off: { field: 'enabled', value: false } };

/**
 * Inbound webhook triggers: a hook belongs to one workflow; a signed delivery
 * to its URL starts a case of that workflow with inputs mapped from the body
 * and headers. Managing hooks needs Workflow: Full (and Case: Full to create,
 * rotate or change one other than renaming or disabling it, since it starts
 * cases); deliveries carry no API key, only a signature.
 */
export class HookService {
  private readonly now: () => number;

  constructor(private readonly deps: HookServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Creates a hook of the workflow; its secret is answered this once. */
  async create(auth: AuthContext, workflowId: string, draft: HookDraft): Promise<HookWithSecret> {
    const workflow = await this.workflowOf(auth, workflowId, 'workflow:full');
    // A hook starts cases without a key: its creator must be allowed to start them.
    assertWorkspaceGrant(auth, { id: workflow.workspaceId, organizationId: workflow.organizationId }, 'case:full');
    if (draft.mapping) await this.checkMapping(workflow.organizationId, workflow.id, draft.mapping);
    const id = this.deps.repo.newId();
    const secret = generateWebhookSecret();
    const hook = await this.deps.repo.create(
      id,
      {
        organizationId: workflow.organizationId,
        workspaceId: workflow.workspaceId,
        workflowId: workflow.id,
        name: draft.name,
        scheme: draft.scheme,
        signatureHeader: 'signatureHeader' in draft ? draft.signatureHeader.toLowerCase() : null,
        mapping: draft.mapping ?? null,
        mode: draft.mode,
        syncTimeoutMs: draft.syncTimeoutMs,
        toleranceSeconds: draft.toleranceSeconds,
        rateLimitPerMinute: draft.rateLimitPerMinute,
        enabled: draft.enabled,
        createdByKeyId: auth.keyId,
        createdByUserId: auth.userId,
      },
      this.deps.secrets.seal(id, secret),
      this.deps.maxPerWorkspace,
    );
    if (hook === 'full')
      throw DomainError.limitReached(
        `Workspace ${workflow.workspaceId} holds ${this.deps.maxPerWorkspace} hooks, the most it may (hooks.maxPerWorkspace): delete one first`,
        { setting: 'hooks.maxPerWorkspace', max: this.deps.maxPerWorkspace },
      );
    return { hook, secret };
  }

  /** The workflow's hooks, newest first (Workflow: Read). */
  async list(
    auth: AuthContext,
    workflowId: string,
    page: { limit: number; cursor?: string },
  ): Promise<Page<HookRecord>> {
    const workflow = await this.workflowOf(auth, workflowId, 'workflow:read');
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    if (page.cursor !== undefined && !after)
      throw DomainError.invalidFields([{ field: 'query.cursor', message: 'is not a cursor of this list' }]);
    return this.deps.repo.listForWorkflow(workflow.id, { limit: page.limit, after });
  }

  /** A hook of the caller's organization (404 otherwise) whose workspace the key reaches with the grant (403). */
  async load(auth: AuthContext, hookId: string, grant: Grant): Promise<HookRecord> {
    const hook = await this.deps.repo.find(hookId);
    if (!hook || hook.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Hook ${hookId} does not exist`);
    assertWorkspaceGrant(auth, { id: hook.workspaceId, organizationId: hook.organizationId }, grant);
    return hook;
  }

  /**
   * A hook to rotate the secret of, or to change other than by a new name or disabling it: Workflow: Full and,
   * as to create one, Case: Full. The secret starts cases as the hook's creator, and a change shapes them (the
   * mapping, answers with their results, a wider tolerance or rate, enabling): a key that may not start cases
   * must not get either. Renaming and disabling (as deleting) start nothing.
   */
  private async loadToStart(auth: AuthContext, hookId: string, changes?: HookChanges): Promise<HookRecord> {
    const hook = await this.load(auth, hookId, 'workflow:full');
    if (changes === undefined || !startsNothing(changes, inert))
      assertWorkspaceGrant(auth, { id: hook.workspaceId, organizationId: hook.organizationId }, 'case:full');
    return hook;
  }

  async update(auth: AuthContext, hookId: string, changes: HookChanges): Promise<HookRecord> {
    const hook = await this.loadToStart(auth, hookId, changes);
    if (changes.mapping) await this.checkMapping(hook.organizationId, hook.workflowId, changes.mapping);
    // Whoever shapes what deliveries start answers for them from then on, as after a rotation: revoking that key
    // stops them. Renaming or disabling leaves them acting for whom they did.
    const updated = await this.deps.repo.update(hook.id, changes, actingKeyAfter(auth, changes, inert));
    if (!updated) throw DomainError.notFound(`Hook ${hookId} does not exist`);
    return updated;
  }

  /**
   * A new secret, answered this once; the old one keeps verifying for `graceSeconds`. Deliveries then act for
   * the rotating key (who holds the secret answers for it): revoking that key stops them, as for a creator's.
   */
  async rotate(auth: AuthContext, hookId: string, graceSeconds: number): Promise<HookWithSecret> {
    const hook = await this.loadToStart(auth, hookId);
    const secret = generateWebhookSecret();
    const until = new Date(this.now() + graceSeconds * 1000).toISOString();
    const rotated = await this.deps.repo.rotateSecret(
      hook.id,
      hook.secretCiphertext,
      this.deps.secrets.seal(hook.id, secret),
      until,
      { createdByKeyId: auth.keyId, createdByUserId: auth.userId },
    );
    if (!rotated) throw DomainError.conflict('The secret was rotated by another request at the same time; retry');
    const stored = await this.deps.repo.find(hook.id);
    if (!stored) throw DomainError.notFound(`Hook ${hookId} does not exist`);
    return { hook: stored, secret };
  }

  async delete(auth: AuthContext, hookId: string): Promise<void> {
    const hook = await this.load(auth, hookId, 'workflow:full');
    await this.deps.repo.delete(hook.id);
  }

  /** The hook a delivery is addressed to: 404 when there is none or it is disabled. */
  async receiving(hookId: string): Promise<HookRecord> {
    const hook = await this.deps.repo.find(hookId);
    if (!hook) throw DomainError.notFound(`Hook ${hookId} does not exist`);
    if (!hook.enabled) throw DomainError.notFound(`Hook ${hookId} is disabled`);
    return hook;
  }

  /** The hook's own delivery budget, shared by every API process. */
  quota(hook: HookRecord): Quota {
    return { name: 'hook', key: `hook:${hook.id}`, limit: hook.rateLimitPerMinute, windowMs: RATE_WINDOW_MS };
  }

  /**
   * Verifies a delivery (401 when unsigned, wrongly signed or outside the timestamp tolerance), maps it to
   * the workflow's inputs (400 naming them) and starts one case; a delivery with the id of an earlier one
   * (webhook-id, X-GitHub-Delivery or Idempotency-Key, 24 h) gets that one's answer and starts nothing.
   */
  async deliver(
    hook: HookRecord,
    delivery: SignedDelivery,
    render: (outcome: DeliveryOutcome) => Answer,
  ): Promise<{ answer: Answer; replayed: boolean }> {
    const verified = verifyDelivery(delivery, {
      scheme: hook.scheme,
      secrets: this.deps.secrets.inForce(hook, this.now()),
      signatureHeader: hook.signatureHeader,
      toleranceSeconds: hook.toleranceSeconds,
      nowSeconds: Math.floor(this.now() / 1000),
    });
    if (!verified.ok) throw DomainError.unauthorized(`Delivery not accepted: ${verified.reason}`);
    const body = parseBody(delivery.rawBody);
    const start = async () => render(await this.start(hook, body, delivery));
    const key = verified.deliveryId ?? delivery.header('idempotency-key');
    if (key === undefined) return { answer: await start(), replayed: false };
    return this.deps.idempotency.run(
      { organizationId: hook.organizationId, scope: `hook:${hook.id}`, key, request: body },
      start,
    );
  }

  private async start(hook: HookRecord, body: unknown, delivery: SignedDelivery): Promise<DeliveryOutcome> {
    const mapped = mapDelivery(hook.mapping, body, (name) => delivery.header(name.toLowerCase()));
    if ('field' in mapped) throw DomainError.invalidFields([mapped]);
    const version = await this.deps.definitions.resolveForRun(hook.organizationId, { workflowId: hook.workflowId }, {});
    // Checked before the case exists, so a delivery that does not map leaves nothing behind.
    const { problems } = validateCaseInputs(version.graph, mapped.inputs, { partial: false, prefix: 'inputs' });
    if (problems.length > 0) throw DomainError.invalidFields(problems.map((p) => withSource(p, mapped.sources)));
    // The signature stands in for a key: the delivery acts as the hook's creator, whose key must still
    // be good (403 otherwise), reaching only the hook's workspace with Case: Full.
    const caller = await this.deps.authentication.actingFor(hook.createdByKeyId, `hook ${hook.id}`, hook.workspaceId, [
      'case:full',
    ]);
    const pending = await this.deps.cases.initiate(
      caller,
      {
        workflowId: hook.workflowId,
        title: hook.name,
        source: 'api',
        initialInput: {},
      },
      { hookId: hook.id, version },
    );
    let started: CaseRecord;
    try {
      started = (await this.deps.cases.execute(caller, pending.id, { inputs: mapped.inputs })).record;
    } catch (err) {
      // The delivery is answered with an error: its case must not stay PENDING as if it were waiting.
      await this.deps.cases.cancel(caller, pending.id).catch(() => undefined);
      throw err;
    }
    if (hook.mode === 'sync') {
      const finished = await this.waitForResults(caller, started.id, hook.syncTimeoutMs);
      if (finished) return { kind: 'finished', ...finished };
    }
    return { kind: 'accepted', record: started };
  }

  private async waitForResults(
    caller: AuthContext,
    caseId: string,
    boundMs: number,
  ): Promise<{ record: CaseRecord; results: CaseResults } | undefined> {
    const until = this.now() + boundMs;
    // Watched before the first read, so an end between a read and the wait wakes the wait.
    const end = this.deps.caseEnds.watch(caseId);
    try {
      // The polls are for a case run by another process (split roles), which this one is not told of.
      for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
        const finished = await this.deps.cases.results(caller, caseId);
        if (finished) return finished;
        const left = until - this.now();
        if (left <= 0) return undefined;
        await end.next(Math.min(pause, left));
      }
    } finally {
      end.close();
    }
  }

  /** The workflow by id or entity id: 404 when there is none in the caller's organization, then the grant (403). */
  private async workflowOf(auth: AuthContext, workflowId: string, grant: Grant) {
    const workflow = await this.deps.workflows.findWorkflowByIdOrEntityId(workflowId);
    if (!workflow || workflow.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Workflow ${workflowId} does not exist`);
    assertWorkspaceGrant(auth, { id: workflow.workspaceId, organizationId: workflow.organizationId }, grant);
    return workflow;
  }

  /** Every mapped name must be an input of the version a delivery would run now. */
  private async checkMapping(organizationId: string, workflowId: string, mapping: HookMapping): Promise<void> {
    const version = await this.deps.definitions.resolveForRun(organizationId, { workflowId }, {});
    const { entries, additionAllowed } = inputVariables(version.graph);
    if (additionAllowed) return;
    const known = [...entries.keys()];
    const problems = Object.keys(mapping)
      .filter((name) => !entries.has(name))
      .map((name) => ({
        field: `body.mapping.${name}`,
        message: `is not an input of this workflow (inputs: ${known.join(', ') || 'none'})`,
      }));
    if (problems.length > 0) throw DomainError.invalidFields(problems);
  }
}

/** The delivery's JSON (400 when it is not JSON). */
function parseBody(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new DomainError('MALFORMED_JSON', 'The delivery body is not JSON', {
      fields: [{ field: 'body', message: 'is not JSON' }],
    });
  }
}

/** A field problem that says where the mapped value came from. */
function withSource(problem: FieldProblem, sources: HookMapping | undefined): FieldProblem {
  const name = problem.field.slice('inputs.'.length);
  const source = sources?.[name];
  return source ? { ...problem, message: `${problem.message} (mapped from ${describeSource(source)})` } : problem;
}
