import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createClient, type CaseflowClient, type paths } from '../../src/client/index.js';
import { answered, type TestResponse, type TestService } from '../support/harness.js';
import type { Caller } from '../support/keys.js';

type ProcessPath = paths['/api/v1/discovery/process/{processId}'];
export type ProcessBody = paths['/api/v1/discovery/process']['post']['requestBody']['content']['application/json'];
export type ProcessPatch = ProcessPath['patch']['requestBody']['content']['application/json'];

export const fixture = (name: string): string =>
  readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', name), 'utf8');

const item = (id: string, text: string) => ({ id, text });

/** A process every rule accepts: a main line, one decision with two branches that rejoin, integrations on two steps. */
export function processBody(overrides: Partial<ProcessBody> = {}): ProcessBody {
  return {
    name: 'Customer onboarding',
    description: 'From signed contract to first invoice',
    status: 'approved',
    processOrigin: 'template-onboarding',
    steps: [
      {
        id: 's1',
        name: 'Receive contract',
        stepOrder: 1,
        stepType: 'manual',
        owner: 'Dana',
        locked: true,
        duration: 30,
        durationUnit: 'minutes',
        durationRange: { min: { value: 20, unit: 'minutes' }, max: { value: 1, unit: 'hours' } },
        waitingTimeRange: { min: { value: 1, unit: 'days' }, max: { value: 2, unit: 'days' } },
        inputs: [item('in-1', 'Signed contract')],
        integrations: [item('int-crm', 'Salesforce')],
        departments: [item('dep-sales', 'Sales')],
        performers: [item('perf-ae', 'Account executive')],
        painPoints: [item('pain-1', 'Contracts arrive by fax')],
      },
      {
        id: 's2',
        name: 'Credit check',
        stepOrder: 2,
        rules: [item('rule-1', 'Score above 600 passes')],
        integrations: [item('int-bureau', 'Credit bureau')],
      },
      {
        id: 's3',
        name: 'Fast track',
        stepOrder: 1,
        branchId: 'b-pass',
        branchLabel: 'Passed',
        branchSourceStepId: 's2',
        branchRejoinStepId: 's5',
        branchOrder: 0,
      },
      {
        id: 's4',
        name: 'Manual review',
        stepOrder: 1,
        branchId: 'b-fail',
        branchLabel: 'Failed',
        branchSourceStepId: 's2',
        branchRejoinStepId: 's5',
        branchOrder: 1,
        integrations: [item('int-crm-2', ' salesforce ')],
      },
      {
        id: 's5',
        name: 'Create account',
        stepOrder: 3,
        outputs: [item('out-1', 'Customer account')],
        integrations: [item('int-crm', 'Salesforce')],
      },
    ],
    customEdges: [
      { id: 'e1', sourceStepId: 's1', targetStepId: 's2' },
      { id: 'e2', sourceStepId: 's2', targetStepId: 's3', label: 'Passed' },
      { id: 'e3', sourceStepId: 's2', targetStepId: 's4', label: 'Failed' },
      { id: 'e4', sourceStepId: 's3', targetStepId: 's5' },
      { id: 'e5', sourceStepId: 's4', targetStepId: 's5' },
    ],
    processInputs: [item('pin-1', 'Contract')],
    processOutputs: [item('pout-1', 'Active customer')],
    processIntegrations: [item('int-erp', 'SAP')],
    processRules: [item('prule-1', 'Onboarding within 5 days')],
    milestone: { country: 'DE', industry: 'Insurance' },
    ...overrides,
  };
}

/** The typed client with this key, or the service's own. */
const clientOf = (svc: TestService, key?: string): CaseflowClient =>
  key === undefined ? svc.client : createClient({ baseUrl: svc.url, key });

/** Asks to create a process as `as` (the service's own key and workspace by default). */
export function postProcess(svc: TestService, body: ProcessBody, as?: Pick<Caller, 'key' | 'workspaceId'>) {
  return clientOf(svc, as?.key).POST('/api/v1/discovery/process', {
    params: { header: { 'x-workspace-id': as?.workspaceId ?? svc.workspaceId } },
    body,
  });
}

/** Creates a process through the API; returns its id. */
export async function createProcess(
  svc: TestService,
  body: ProcessBody = processBody(),
  as?: Pick<Caller, 'key' | 'workspaceId'>,
): Promise<string> {
  return (await answered(postProcess(svc, body, as), 201)).id;
}

/** Reads a process (or one of its snapshots) with this key, the service's own by default. */
export function readProcess(svc: TestService, processId: string, processVersionId?: string, key?: string) {
  return clientOf(svc, key).GET('/api/v1/discovery/process/{processId}', {
    params: { path: { processId }, query: processVersionId ? { processVersionId } : {} },
  });
}

export function patchProcess(svc: TestService, processId: string, body: ProcessPatch, key?: string) {
  return clientOf(svc, key).PATCH('/api/v1/discovery/process/{processId}', { params: { path: { processId } }, body });
}

export function snapshotProcess(svc: TestService, processId: string, key?: string) {
  return clientOf(svc, key).POST('/api/v1/discovery/process/{processId}/version', {
    params: { path: { processId } },
  });
}

/** A raw response or a typed client call's answer: its status and body. */
type Answer = TestResponse | { response: Response; error?: unknown; data?: unknown };
const statusAndBody = (res: Answer): [number, unknown] =>
  'response' in res ? [res.response.status, res.error ?? res.data] : [res.status, res.body];

export function expectError(res: Answer, status: number, text?: string): void {
  const [got, body] = statusAndBody(res);
  const shown = JSON.stringify(body);
  expect(got, shown).toBe(status);
  expect((body as { statusCode?: number }).statusCode).toBe(status);
  if (text) expect(shown).toContain(text);
}

/** The paths a 400 VALIDATION_ERROR names in metadata.violations. */
export function violationPaths(res: Answer): string[] {
  const metadata = (statusAndBody(res)[1] as { metadata?: { violations?: Array<{ path: string }> } }).metadata;
  return (metadata?.violations ?? []).map((v) => v.path);
}
