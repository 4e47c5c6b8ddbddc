import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { expectError, fixture, postProcess, readProcess } from './support.js';
import { newCaller } from '../support/keys.js';

type Json = Record<string, unknown>;

const BPMN_NS = 'http://www.omg.org/spec/BPMN/20100524/MODEL';

/** A minimal BPMN document around the given process children (or whole processes when `raw`). */
function bpmn(inner: string, options: { raw?: boolean; doctype?: string } = {}): string {
  const body = options.raw ? inner : `<bpmn:process id="P1" name="Small">${inner}</bpmn:process>`;
  return `<?xml version="1.0" encoding="UTF-8"?>${options.doctype ?? ''}<bpmn:definitions xmlns:bpmn="${BPMN_NS}" id="D1">${body}</bpmn:definitions>`;
}

const twoTasks =
  '<bpmn:task id="A" name="A"/><bpmn:task id="B" name="B"/><bpmn:sequenceFlow id="F" sourceRef="A" targetRef="B"/>';

describe('BPMN 2.0 import', () => {
  let svc: TestService;
  let fetched: string[];
  let trap: Server;
  let trapUrl: string;
  beforeAll(async () => {
    svc = await startTestService();
    // A server an external entity would make the service fetch from: it must never be asked for anything.
    fetched = [];
    trap = createServer((req, res) => {
      fetched.push(req.url ?? '');
      res.end('<!ENTITY leak "leaked">');
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await svc?.stop();
    await new Promise((resolve) => trap?.close(resolve));
  });

  /** Untyped: the import takes raw XML (and the tests send other content types). */
  const importXml = (
    xml: string | Buffer,
    options: { key?: string; workspaceId?: string; query?: string; contentType?: string } = {},
  ) =>
    svc.request('POST', `/api/v1/discovery/process/import${options.query ?? ''}`, {
      rawBody: xml,
      key: options.key,
      headers: {
        'content-type': options.contentType ?? 'application/xml',
        'x-workspace-id': options.workspaceId ?? svc.workspaceId,
      },
    });

  it('round-trips a Camunda Modeler export: tasks, flows through gateways, branches, lanes, data', async () => {
    const res = await importXml(fixture('invoice-approval.bpmn'));
    expect(res.status, res.text).toBe(201);
    expect(res.body.bpmnProcessId).toBe('Process_Invoice');
    const process = res.body.process as Json;
    expect(process).toMatchObject({
      name: 'Invoice approval',
      description: 'How a supplier invoice is registered, checked, approved and paid.',
      workspaceId: svc.workspaceId,
      stepCount: 8,
      branchCount: 4,
      processIntegrations: [{ id: 'DataStoreReference_ERP', text: 'ERP system' }],
    });
    const steps = process.steps as Json[];
    const brief = steps.map((s) => [
      s.stepOrder,
      s.id,
      s.stepType,
      s.name,
      s.branchId,
      s.branchLabel,
      s.branchSourceStepId,
      s.branchRejoinStepId,
      s.branchOrder,
    ]);
    // branchOrder is a number on every step: 0 on the main line.
    expect(brief).toEqual([
      [1, 'Task_Register', 'userTask', 'Register invoice', null, null, null, null, 0],
      [2, 'Task_CheckPO', 'serviceTask', 'Match purchase order', 'Flow_3', null, 'Task_Register', 'Task_Approve', 0],
      [3, 'Task_CheckContract', 'userTask', 'Check contract terms', 'Flow_4', null, 'Task_Register', 'Task_Approve', 1],
      [4, 'Task_Approve', 'userTask', 'Approve invoice', null, null, null, null, 0],
      [5, 'Task_Remind', 'sendTask', 'Remind approver', null, null, null, null, 0],
      [6, 'Task_Pay', 'serviceTask', 'Pay supplier', 'Flow_Yes', 'Yes', 'Task_Approve', null, 0],
      [7, 'Task_Reject', 'sendTask', 'Notify supplier of rejection', 'Flow_No', 'No', 'Task_Approve', null, 1],
      [8, 'Task_Archive', 'task', 'Archive invoice', 'Flow_Yes', 'Yes', 'Task_Approve', null, 0],
    ]);
    const byId = Object.fromEntries(steps.map((s) => [s.id, s]));
    const pool = { id: 'Process_Invoice-pool', text: 'Accounts Payable' };
    expect(byId.Task_Register).toMatchObject({
      description: 'Key the invoice into the ledger.',
      performers: [{ id: 'Lane_Clerk', text: 'Clerk' }],
      departments: [pool],
      inputs: [{ id: 'DataObjectReference_Scan', text: 'Scanned invoice' }],
      outputs: [{ id: 'DataObjectReference_Record', text: 'Invoice record' }],
      rules: [{ id: 'Gateway_Split', text: 'Parallel split: every branch runs' }],
    });
    expect(byId.Task_Pay).toMatchObject({
      performers: [{ id: 'Lane_Payments', text: 'Payments team' }],
      departments: [pool, { id: 'Lane_Accounting', text: 'Accounting' }],
      integrations: [{ id: 'DataStoreReference_ERP', text: 'ERP system' }],
      rules: [{ id: 'Flow_Yes', text: 'Taken when ${approved}' }],
    });
    expect(byId.Task_Approve).toMatchObject({
      inputs: [{ id: 'DataObjectReference_Record', text: 'Invoice record' }],
      rules: [{ id: 'Gateway_Decision', text: 'Exclusive decision "Approved?": exactly one branch is taken' }],
    });
    expect(byId.Task_Reject?.rules).toEqual([{ id: 'Flow_No', text: 'Taken when no other branch’s condition holds' }]);
    expect(process.customEdges).toEqual([
      { id: 'Flow_2:Task_CheckPO', sourceStepId: 'Task_Register', targetStepId: 'Task_CheckPO' },
      { id: 'Flow_2:Task_CheckContract', sourceStepId: 'Task_Register', targetStepId: 'Task_CheckContract' },
      { id: 'Flow_5:Task_Approve', sourceStepId: 'Task_CheckPO', targetStepId: 'Task_Approve' },
      { id: 'Flow_6:Task_Approve', sourceStepId: 'Task_CheckContract', targetStepId: 'Task_Approve' },
      {
        id: 'Event_Overdue:Task_Remind',
        sourceStepId: 'Task_Approve',
        targetStepId: 'Task_Remind',
        label: 'Approval overdue',
      },
      { id: 'Flow_8:Task_Pay', sourceStepId: 'Task_Approve', targetStepId: 'Task_Pay', label: 'Yes' },
      { id: 'Flow_8:Task_Reject', sourceStepId: 'Task_Approve', targetStepId: 'Task_Reject', label: 'No' },
      { id: 'Flow_Pay_Archive', sourceStepId: 'Task_Pay', targetStepId: 'Task_Archive' },
      { id: 'Flow_Remind_Back', sourceStepId: 'Task_Remind', targetStepId: 'Task_Approve' },
    ]);
    expect((res.body.dropped as Json[]).map((d) => `${String(d.element)}:${String(d.id)}`)).toEqual([
      'startEvent:StartEvent_Received',
      'endEvent:EndEvent_Paid',
      'endEvent:EndEvent_Rejected',
      'boundaryEvent:Event_Overdue',
      'textAnnotation:TextAnnotation_Limit',
      'association:Association_Limit',
      'message:Message_1hq8r1x',
      'BPMNDiagram:BPMNDiagram_1',
    ]);

    // The stored process reads back as imported, and its JSON re-creates the same process.
    const id = String(process.id);
    const read = await answered(readProcess(svc, id), 200);
    expect(read).toEqual(process);
    const {
      id: _id,
      organizationId: _o,
      workspaceId: _w,
      stepCount: _s,
      branchCount: _b,
      createdAt: _c,
      updatedAt: _u,
      processVersionId: _v,
      versionNumber: _n,
      ...document
    } = read;
    const again = await answered(postProcess(svc, document), 201);
    expect({ ...again, id, createdAt: process.createdAt, updatedAt: process.updatedAt }).toEqual(process);
  });

  it('refuses external entities (XXE) without fetching anything', async () => {
    const fileEntity = bpmn('<bpmn:task id="A" name="&xxe;"/>', {
      doctype: '<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    });
    const byFile = await importXml(fileEntity);
    expectError(byFile, 400, 'DOCTYPE');
    expect(byFile.text).not.toContain('root:');
    const byUrl = await importXml(
      bpmn('<bpmn:task id="A" name="&xxe;"/>', { doctype: `<!DOCTYPE d [<!ENTITY xxe SYSTEM "${trapUrl}/entity">]>` }),
    );
    expectError(byUrl, 400, 'DOCTYPE');
    const parameterEntity = await importXml(
      bpmn(twoTasks, { doctype: `<!DOCTYPE d [<!ENTITY % remote SYSTEM "${trapUrl}/dtd"> %remote;]>` }),
    );
    expectError(parameterEntity, 400, 'DOCTYPE');
    const externalDtd = await importXml(
      bpmn(twoTasks, { doctype: `<!DOCTYPE definitions SYSTEM "${trapUrl}/external.dtd">` }),
    );
    expectError(externalDtd, 400, 'DOCTYPE');
    expect(fetched).toEqual([]);
  });

  it('refuses entity expansion (billion laughs) at the DOCTYPE', async () => {
    const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
    const doctype = `<!DOCTYPE lolz [<!ENTITY lol0 "lol">${levels}]>`;
    // Refused at the DOCTYPE itself, before any entity is declared, so nothing is ever expanded.
    const res = await importXml(bpmn('<bpmn:task id="A" name="&lol9;"/>', { doctype }));
    expectError(res, 400, 'DOCTYPE');
    // Without a DOCTYPE an entity reference is simply undefined: no expansion of anything but the five XML ones.
    expectError(await importXml(bpmn('<bpmn:task id="A" name="&lol9;"/>')), 400, 'undefined entity');
    const predefined = await importXml(bpmn('<bpmn:task id="A" name="Tom &amp; Jerry &#x263A;"/>'));
    expect(predefined.status, predefined.text).toBe(201);
    expect(((predefined.body.process as Json).steps as Json[])[0]?.name).toBe('Tom & Jerry ☺');
  });

  it('answers 400 for XML that is not well-formed, not BPMN, or too deep, naming where', async () => {
    const broken = await importXml(bpmn('<bpmn:task id="A" name="A">'));
    expectError(broken, 400, 'line 1');
    expectError(
      await importXml('<definitions xmlns="urn:not-bpmn"><process/></definitions>'),
      400,
      'Not a BPMN 2.0 document',
    );
    expectError(await importXml(''), 400);
    const deep = `${'<bpmn:extensionElements>'.repeat(150)}${'</bpmn:extensionElements>'.repeat(150)}`;
    expectError(await importXml(bpmn(`<bpmn:task id="A" name="A">${deep}</bpmn:task>`)), 400, 'deeper than');
    expectError(await importXml(bpmn('<bpmn:startEvent id="S"/>')), 400, 'no process with a task');
  });

  it('maps the result through the same validation as a create', async () => {
    const duplicate = await importXml(bpmn('<bpmn:task id="A" name="A"/><bpmn:userTask id="A" name="Again"/>'));
    expectError(duplicate, 400, 'duplicate step id');
    const longName = await importXml(bpmn(`<bpmn:task id="A" name="${'n'.repeat(300)}"/>`));
    expectError(longName, 400, 'steps.0.name');
  });

  it('refuses crafted flow graphs that would make the mapping quadratic, by their shape', async () => {
    const tasks = (n: number) => Array.from({ length: n }, (_, i) => `<bpmn:task id="T${i}" name="T${i}"/>`).join('');
    const flow = (id: string, from: string, to: string) =>
      `<bpmn:sequenceFlow id="${id}" sourceRef="${from}" targetRef="${to}"/>`;
    // Every task into one gateway that leads back to every task: a million edges.
    const fanOut =
      tasks(1000) +
      '<bpmn:exclusiveGateway id="G"/>' +
      Array.from({ length: 1000 }, (_, i) => flow(`in${i}`, `T${i}`, 'G') + flow(`out${i}`, 'G', `T${i}`)).join('');
    // Many tasks into one long chain of gateways: each walk is long.
    const chain =
      tasks(500) +
      Array.from({ length: 500 }, (_, i) => flow(`t${i}`, `T${i}`, 'G0')).join('') +
      Array.from(
        { length: 9000 },
        (_, i) => `<bpmn:exclusiveGateway id="G${i}"/>${flow(`g${i}`, `G${i}`, `G${i + 1}`)}`,
      ).join('') +
      flow('end', 'G9000', 'T0');
    for (const [, inner, message] of [
      ['fan-out', fanOut, 'edges between steps'],
      ['chain', chain, 'fan out too much'],
    ] as const) {
      expectError(await importXml(bpmn(inner)), 400, message);
    }
    expectError(await importXml(bpmn(tasks(1001))), 400, 'more than 1000 activities');
  });

  it('picks one process of a collaboration with bpmnProcessId', async () => {
    const two = bpmn(
      `<bpmn:process id="P1" name="One">${twoTasks}</bpmn:process><bpmn:process id="P2" name="Two"><bpmn:task id="C" name="C"/></bpmn:process>`,
      { raw: true },
    );
    const ambiguous = await importXml(two);
    expectError(ambiguous, 400, 'bpmnProcessId');
    expect((ambiguous.body.metadata as Json).bpmnProcessIds).toEqual(['P1', 'P2']);
    const chosen = await importXml(two, { query: '?bpmnProcessId=P2' });
    expect(chosen.status, chosen.text).toBe(201);
    expect(chosen.body).toMatchObject({ bpmnProcessId: 'P2', process: { name: 'Two', stepCount: 1 } });
    expectError(await importXml(two, { query: '?bpmnProcessId=P9' }), 400, 'no process P9');
  });

  it('accepts text/xml and application/bpmn+xml, refuses other media types with 415', async () => {
    expect((await importXml(bpmn(twoTasks), { contentType: 'text/xml; charset=utf-8' })).status).toBe(201);
    expect((await importXml(bpmn(twoTasks), { contentType: 'application/bpmn+xml' })).status).toBe(201);
    expectError(await importXml(JSON.stringify({ xml: bpmn(twoTasks) }), { contentType: 'application/json' }), 415);
    expectError(await importXml(bpmn(twoTasks), { contentType: 'text/plain' }), 415);
  });

  it('refuses a document over 5 MB with 413', async () => {
    const padding = `<bpmn:documentation>${'x'.repeat(5 * 1024 * 1024)}</bpmn:documentation>`;
    expectError(await importXml(bpmn(`${padding}${twoTasks}`)), 413);
  });

  it('authorizes before reading the body: Discovery: Full in the workspace', async () => {
    const reader = await newCaller(svc, ['discovery:read']);
    expectError(
      await importXml('<not xml', { key: reader.key, workspaceId: reader.workspaceId }),
      403,
      'Discovery: Full',
    );
    const other = await newCaller(svc, ['discovery:full']);
    expectError(await importXml(bpmn(twoTasks), { key: other.key }), 403, 'another organization');
    expectError(await importXml(bpmn(twoTasks), { workspaceId: crypto.randomUUID() }), 404);
    expectError(await importXml(bpmn(twoTasks), { workspaceId: 'nope' }), 400, 'x-workspace-id');
    const own = await importXml(bpmn(twoTasks), { key: other.key, workspaceId: other.workspaceId });
    expect(own.status, own.text).toBe(201);
    expect((own.body.process as Json).organizationId).toBe(other.organizationId);
  });
});
