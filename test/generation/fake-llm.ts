import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  temperature?: number;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { name: string; schema?: Record<string, unknown> } };
}

export type Agent = 'triage' | 'plan' | 'step_build' | 'node_output';

/** What the script answers: a JSON value as the content, or a raw reply. */
export type Reply =
  | { json: unknown; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { raw: { status: number; body: string; headers?: Record<string, string> } }
  | { refusal: string }
  | { content: string }
  | { delayMs: number; then: Reply };

/**
 * An OpenAI-compatible chat-completions server over real HTTP, scripted per
 * test: `script(agent, request, n)` answers the n-th call (from 1) of each agent.
 */
export class FakeLlm {
  private server!: Server;
  url = '';
  calls: Array<{ agent: Agent; request: ChatRequest; authorization: string | undefined }> = [];
  script: (agent: Agent, request: ChatRequest, n: number) => Reply = () => ({
    raw: { status: 500, body: 'no script' },
  });

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  count(agent: Agent): number {
    return this.calls.filter((c) => c.agent === agent).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    const system = request.messages[0]?.content ?? '';
    const agent: Agent =
      (request.response_format?.json_schema?.name as Agent | undefined) ??
      (system.includes('triage agent') ? 'triage' : system.includes('architect agent') ? 'plan' : 'step_build');
    this.calls.push({ agent, request, authorization: req.headers.authorization });
    let reply = this.script(agent, request, this.count(agent));
    while ('delayMs' in reply) {
      const wait = reply.delayMs;
      await new Promise((r) => setTimeout(r, wait));
      if (res.destroyed) return;
      reply = reply.then;
    }
    if ('raw' in reply) {
      res
        .writeHead(reply.raw.status, { 'content-type': 'application/json', ...(reply.raw.headers ?? {}) })
        .end(reply.raw.body);
      return;
    }
    const message =
      'refusal' in reply
        ? { role: 'assistant', content: null, refusal: reply.refusal }
        : { role: 'assistant', content: 'content' in reply ? reply.content : JSON.stringify(reply.json) };
    const usage = 'json' in reply && reply.usage ? reply.usage : { prompt_tokens: 100, completion_tokens: 50 };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: 'stop' }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
  }
}

/** A plan: amount → (condition amount > 1000: approval note | else auto note) → label. */
export const goodPlan = {
  name: 'Invoice routing',
  description: 'Routes invoices by amount',
  inputs: [
    { name: 'amount', type: 'float', description: 'Invoice amount', sample: '1500' },
    { name: 'vendor', type: 'str', description: 'Vendor name', sample: '"  acme corp "' },
  ],
  steps: [
    {
      id: 's1',
      name: 'Clean vendor',
      kind: 'code',
      description: 'Trim the vendor name',
      inputs: ['vendor'],
      outputs: [{ name: 'vendor_clean', type: 'str' }],
      branch_of: null,
      integration: null,
    },
    {
      id: 's2',
      name: 'Large invoice?',
      kind: 'condition',
      description: 'amount over 1000',
      inputs: ['amount'],
      outputs: [],
      branch_of: null,
      integration: null,
    },
    {
      id: 's3',
      name: 'Needs approval',
      kind: 'code',
      description: 'Mark for approval',
      inputs: ['vendor_clean', 'amount'],
      outputs: [{ name: 'decision', type: 'str' }],
      branch_of: { condition: 's2', when: true },
      integration: null,
    },
    {
      id: 's4',
      name: 'Auto approve',
      kind: 'code',
      description: 'Approve automatically',
      inputs: ['vendor_clean'],
      outputs: [{ name: 'decision', type: 'str' }],
      branch_of: { condition: 's2', when: false },
      integration: null,
    },
  ],
  outputs: [{ name: 'decision', type: 'str' }],
};

/** What a builder answer leaves null unless its step's kind uses it. */
export const unused = { llm: null, action: null };

export const goodBuilds: Record<string, unknown> = {
  s1: {
    source: 'def main(inputs):\n    return {"vendor_clean": " ".join(str(inputs.get("vendor") or "").split())}\n',
    match: null,
    rules: null,
    ...unused,
    unresolved: null,
  },
  s2: {
    source: null,
    match: 'all',
    rules: [{ variable: 'amount', op: 'gt', value: '1000' }],
    ...unused,
    unresolved: null,
  },
  s3: {
    source: 'def main(inputs):\n    return {"decision": "approval needed for " + inputs["vendor_clean"]}\n',
    match: null,
    rules: null,
    ...unused,
    unresolved: null,
  },
  s4: {
    source: 'def main(inputs):\n    return {"decision": "auto approved for " + inputs["vendor_clean"]}\n',
    match: null,
    rules: null,
    ...unused,
    unresolved: null,
  },
};

/** A plan step as an architect answers it: a code step named `name`, unless `rest` says otherwise. */
export const planStep = (id: string, name: string, rest: Record<string, unknown>) => ({
  id,
  name,
  description: name,
  kind: 'code',
  inputs: [],
  outputs: [],
  branch_of: null,
  integration: null,
  ...rest,
});

/** The step a builder request is for. */
export function stepOf(request: ChatRequest): string {
  const user = JSON.parse(request.messages[1]?.content ?? '{}') as { step?: { id?: string } };
  return user.step?.id ?? '';
}

/** A script that builds goodPlan; `override` may answer some calls differently. */
export function happyScript(override?: (agent: Agent, request: ChatRequest, n: number) => Reply | undefined) {
  return (agent: Agent, request: ChatRequest, n: number): Reply => {
    const special = override?.(agent, request, n);
    if (special) return special;
    if (agent === 'triage') return { json: { relevant: true, reason: 'a process' } };
    if (agent === 'plan') return { json: goodPlan, usage: { prompt_tokens: 300, completion_tokens: 200 } };
    return { json: goodBuilds[stepOf(request)] };
  };
}
