import { describe, expect, it } from 'vitest';
import { OfflinePlanner } from '../../src/generation/offline-planner.js';
import type { Plan } from '../../src/domain/generation/plan.js';
import { describesWork, unplannedActions, withUnplannedSteps } from '../../src/generation/prompt-actions.js';

const planner = new OfflinePlanner();
async function plan(prompt: string): Promise<Plan> {
  return (await planner.architect({ prompt, files: [], feedback: [], tools: [], workflows: [] })).value;
}
async function builds(p: Plan, prompt = '') {
  return Promise.all(
    p.steps.map(async (step) => ({
      step,
      build: (await planner.build({ prompt, plan: p, step, feedback: [], tools: [], workflows: [] })).value,
    })),
  );
}

describe('the offline planner reads what it honestly can', () => {
  it('types inputs from the nouns that name them', async () => {
    const invoice = await plan(
      'When a customer sends an invoice PDF, extract the total amount and the due date, and if the total is above 10000 send it for manager approval, otherwise mark it approved.',
    );
    expect(invoice.inputs[0]).toMatchObject({ name: 'invoice', type: 'file', allowed_file_types: ['PDF'] });
    const extract = invoice.steps.find((s) => s.name.startsWith('extract'));
    expect(extract?.outputs).toEqual([
      { name: 'total_amount', type: 'float' },
      { name: 'due_date', type: 'date' },
    ]);
    const receipts = await plan('For each receipt in an expense report, read the amount and sum the amounts.');
    expect(receipts.inputs[0]).toMatchObject({ type: 'array_files', allowed_file_types: ['PDF', 'PNG', 'JPEG'] });
    const loan = await plan(
      "Given an applicant's monthly income, monthly debt and loan amount, compute the debt-to-income ratio.",
    );
    expect(loan.inputs.map((i) => [i.name, i.type])).toEqual([
      ['monthly_income', 'float'],
      ['monthly_debt', 'float'],
      ['loan_amount', 'float'],
    ]);
    expect((await plan('Given a delivery date, mark the shipment as late.')).inputs[0]).toMatchObject({ type: 'date' });
    expect((await plan('Given a list of survey ratings, sort the ratings.')).inputs[0]).toMatchObject({
      name: 'survey_ratings',
      type: 'array',
    });
    expect((await plan('Read an uploaded Excel timesheet and count the words.')).inputs[0]).toMatchObject({
      name: 'timesheet',
      type: 'file',
      allowed_file_types: ['XLSX', 'XLS', 'CSV'],
    });
  });

  it('reads a condition in the middle of a sentence with its otherwise branch, on the value it names', async () => {
    const p = await plan(
      'When a customer sends an invoice PDF, extract the total amount and the due date, and if the total is above 10000 send it for manager approval, otherwise mark it approved.',
    );
    const condition = p.steps.find((s) => s.kind === 'condition');
    expect(condition).toMatchObject({ name: 'if the total is above 10000', inputs: ['total_amount'] });
    expect(
      p.steps.filter((s) => s.branch_of?.condition === condition?.id).map((s) => [s.name, s.branch_of?.when]),
    ).toEqual([
      ['send it for manager approval', true],
      ['mark it approved', false],
    ]);
    const built = await builds(p);
    expect(built.find((b) => b.step === condition)?.build.rules).toEqual([
      { variable: 'total_amount', op: 'gt', value: '10000' },
    ]);
    // A PDF cannot be parsed in the sandbox: named, nothing faked. The approval is a person's task.
    const unresolved = built.filter((b) => b.build.unresolved).map((b) => b.step.name);
    expect(unresolved).toEqual(['read invoice']);
    const approval = built.find((b) => b.step.name === 'send it for manager approval');
    expect(approval?.step.kind).toBe('human_task');
    expect(approval?.build.task?.role).toBeNull();
    expect(built[0]?.build.unresolved).toContain('PDF');
  });

  it('leaves a comparison it cannot read exactly as a condition needing attention, not a wrong rule', async () => {
    for (const prompt of [
      'Given an order id, fetch the order, and if it shipped more than 10 days ago without delivery, open a claim with the carrier.',
      'Given our current price and the competitor price, if our price is more than 10% above the competitor price, lower it to match, otherwise keep it.',
      'Given a contract text, count the words, and if the renewal date is within 30 days, alert the legal team.',
    ]) {
      const p = await plan(prompt);
      const built = await builds(p, prompt);
      const condition = built.find((b) => b.step.kind === 'condition');
      expect(condition?.build.rules, prompt).toBeNull();
      expect(condition?.build.unresolved, prompt).toContain('cannot read the condition');
    }
  });

  it('does per-item work for "each" over a list, and reads CSV / JSON / text files in the sandbox', async () => {
    const p = await plan('Given a list of names, trim each name.');
    const [built] = await builds(p);
    expect(built?.step.outputs[0]?.type).toBe('array');
    expect(built?.build.source).toContain('[one(value) for value in inputs.get("names") or []]');
    const csv = await builds(await plan('Given a CSV of leads, sort the rows.'));
    expect(csv[0]?.build.source).toContain('csv.DictReader');
    expect(csv[0]?.build.source).toContain('caseflow.read_file(url)');
    const json = await plan('Given a JSON file of rental payments, sort the payments.');
    expect(json.inputs[0]).toMatchObject({ name: 'rental_payments', type: 'file', allowed_file_types: ['JSON'] });
  });
});

describe('the outcome rule: measured against what the prompt asks for', () => {
  it('a prompt that describes work is never irrelevant; questions and chat are', async () => {
    expect(describesWork('Summarize a meeting transcript into action items with owners and due dates.')).toBe(true);
    expect(describesWork('When the stock of a product falls below 20 units, reorder it from the supplier.')).toBe(true);
    for (const chat of ['What is the capital of France?', 'Write a short story about a dragon who loves spreadsheets.'])
      expect(describesWork(chat)).toBe(false);
    const triage = await planner.triage('Summarize a meeting transcript into action items with owners and due dates.');
    expect(triage.value.relevant).toBe(true);
  });

  it('names every asked-for action and condition a plan left out, whoever planned it', () => {
    const prompt =
      'Given an order id, fetch the order, and if it shipped more than 10 days ago without delivery, open a claim with the carrier.';
    // A plan that only fetches (what an LLM might answer): the condition and the claim are missing.
    const partialPlan: Plan = {
      name: 'Orders',
      description: '',
      inputs: [{ name: 'order_id', type: 'str', description: '', sample: '"1"', allowed_file_types: null }],
      steps: [
        {
          id: 's1',
          name: 'Fetch order',
          kind: 'code',
          description: 'Load the order',
          inputs: ['order_id'],
          outputs: [{ name: 'order', type: 'object' }],
          branch_of: null,
          integration: null,
        },
      ],
      outputs: [{ name: 'order', type: 'object' }],
    };
    expect(unplannedActions(prompt, partialPlan).map((a) => a.text)).toEqual([
      'if it shipped more than 10 days ago without delivery',
      'open a claim with the carrier',
    ]);
    const checked = withUnplannedSteps(prompt, partialPlan);
    expect(checked.plan.steps.map((s) => s.id)).toEqual(['s1', 's2', 's3']);
    expect(checked.presets.s3?.unresolved).toContain('"open a claim with the carrier"');
    expect(checked.notes).toHaveLength(2);
    // A plan that does all of it needs nothing added.
    const full = withUnplannedSteps('Given a text, count the words.', {
      ...partialPlan,
      steps: [{ ...partialPlan.steps[0]!, name: 'Count words', description: 'count the words' }],
    });
    expect(full.notes).toEqual([]);
  });
});
