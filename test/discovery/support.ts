import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { TestResponse, TestService } from '../support/harness.js';
import type { Caller } from '../support/keys.js';

export const fixture = (name: string): string =>
  readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', name), 'utf8');

const item = (id: string, text: string) => ({ id, text });

/** A process every rule accepts: a main line, one decision with two branches that rejoin, integrations on two steps. */
export function processBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
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

/** Creates a process through the API; returns its id. */
export async function createProcess(
  svc: TestService,
  body: Record<string, unknown> = processBody(),
  as?: Caller,
): Promise<string> {
  const res = await svc.request('POST', '/api/v1/discovery/process', {
    body,
    key: as?.key,
    headers: { 'x-workspace-id': as?.workspaceId ?? svc.workspaceId },
  });
  expect(res.status, res.text).toBe(201);
  return String(res.body.id);
}

export function expectError(res: TestResponse, status: number, text?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.statusCode).toBe(status);
  if (text) expect(res.text).toContain(text);
}

/** The paths a 400 VALIDATION_ERROR names in metadata.violations. */
export function violationPaths(res: TestResponse): string[] {
  const metadata = res.body.metadata as { violations?: Array<{ path: string }> } | undefined;
  return (metadata?.violations ?? []).map((v) => v.path);
}
