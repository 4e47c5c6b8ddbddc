import { randomUUID } from 'node:crypto';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { signedHeaders } from '../../callbacks/signing.js';
import { hookModes, hookSchemes } from '../../domain/hooks.js';
import { clientAction, noOptions, pairs } from './command.js';
import { CliError, exitCodes } from './errors.js';
import { collectPair } from './inputs.js';
import type { Session } from './session.js';

interface Hook {
  hookId: string;
  name: string;
  url: string;
  scheme: string;
  mode: string;
  enabled: boolean;
  workflowId: string;
}

const line = (h: Hook) =>
  `${h.hookId}  ${h.enabled ? 'enabled ' : 'disabled'}  ${h.scheme}  ${h.mode}  ${h.name}  ${h.url}`;

/** What a sender needs, printed once with the secret. */
const secretLines = (h: Hook & { secret: string }) => [
  line(h),
  `url:    ${h.url}`,
  `secret: ${h.secret}`,
  'the secret is shown only now: keep it with the sender.',
  ...(h.scheme === 'standard-webhooks'
    ? [
        'sign a delivery (Standard Webhooks): headers webhook-id, webhook-timestamp (unix seconds) and',
        '  webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed by the base64 after whsec_>',
        `or let the CLI sign and send one: caseflow hook send ${h.url} --secret <secret> --data '{"…": …}'`,
      ]
    : ['signing: see docs/webhook-triggers.md for the scheme']),
];

/** `name=/json/pointer` reads the body there; `name=header:X-Name` a header. */
function mapping(given: Array<[string, string]> | undefined) {
  if (!given?.length) return undefined;
  return Object.fromEntries(
    given.map(([input, source]) => [
      input,
      source.startsWith('header:') ? { header: source.slice(7) } : { body: source },
    ]),
  );
}

const hookBody = (opts: {
  name: string;
  scheme: (typeof hookSchemes)[number];
  signatureHeader?: string;
  mode: (typeof hookModes)[number];
  map?: Array<[string, string]>;
}) => {
  const common = { name: opts.name, mode: opts.mode, mapping: mapping(opts.map) };
  if (opts.scheme !== 'hmac-sha256') return { ...common, scheme: opts.scheme };
  if (!opts.signatureHeader) throw new CliError('--scheme hmac-sha256 needs --signature-header', exitCodes.usage);
  return { ...common, scheme: opts.scheme, signatureHeader: opts.signatureHeader };
};

async function listHooks(session: Session, workflowId: string): Promise<Hook[]> {
  const page = await session.call(
    session.client.GET('/api/v1/workflow/{workflowId}/hooks', {
      params: { path: { workflowId }, query: { limit: 100 } },
    }),
  );
  return page.hooks;
}

/** `caseflow hook create|list|delete|rotate|send`: webhook triggers, URLs that start a case per signed delivery. */
export function registerHookCommands(program: Command): void {
  const hooks = program.command('hook').description('webhook triggers: a signed POST to their URL starts a case');

  clientAction(
    hooks
      .command('create <workflow>')
      .description('a URL that starts a case of the workflow (id or name) per signed delivery; prints its secret once')
      .requiredOption('--name <name>', 'what the hook is for')
      .addOption(
        new Option('--scheme <scheme>', 'how deliveries are signed').choices(hookSchemes).default('standard-webhooks'),
      )
      .option('--signature-header <header>', 'hmac-sha256: the header carrying the hex signature')
      .addOption(
        new Option('--mode <mode>', 'async: answer the case id; sync: wait for the results')
          .choices(hookModes)
          .default('async'),
      )
      .option(
        '--map <input=source>',
        'an input from the delivery: /json/pointer of the body, or header:Name (repeatable; default: the body is the inputs)',
        collectPair,
      ),
    z.tuple([
      z.string(),
      z.object({
        name: z.string(),
        scheme: z.enum(hookSchemes),
        signatureHeader: z.string().optional(),
        mode: z.enum(hookModes),
        map: pairs,
      }),
    ]),
    async ({ session, out }, [ref, opts]) => {
      const s = session();
      const { workflowId } = await s.requireWorkflow(ref);
      const created = await s.call(
        s.client.POST('/api/v1/workflow/{workflowId}/hooks', {
          params: { path: { workflowId } },
          body: hookBody(opts),
        }),
      );
      out.result(created, () => secretLines(created));
    },
  );

  clientAction(
    hooks.command('list <workflow>').description("a workflow's webhook triggers (never their secrets)"),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [ref]) => {
      const s = session();
      const found = await listHooks(s, (await s.requireWorkflow(ref)).workflowId);
      out.result(found, () => (found.length ? found.map(line) : ['no hooks']));
    },
  );

  clientAction(
    hooks
      .command('rotate <hookId>')
      .description('a new secret, printed once; the old one keeps verifying for --grace seconds')
      .option('--grace <seconds>', 'how long the old secret still verifies', '86400'),
    z.tuple([z.string(), z.object({ grace: z.coerce.number().int().min(0) })]),
    async ({ session, out }, [hookId, opts]) => {
      const s = session();
      const rotated = await s.call(
        s.client.POST('/api/v1/hooks/{hookId}/rotate-secret', {
          params: { path: { hookId } },
          body: { graceSeconds: opts.grace },
        }),
      );
      out.result(rotated, () => [
        ...secretLines(rotated),
        `the previous secret verifies until ${rotated.previousSecretValidUntil ?? 'now'}`,
      ]);
    },
  );

  clientAction(
    hooks.command('delete <hookId>').description('deliveries to its URL answer 404 from now on'),
    z.tuple([z.string(), noOptions]),
    async ({ session, out }, [hookId]) => {
      const s = session();
      await s.send(s.client.DELETE('/api/v1/hooks/{hookId}', { params: { path: { hookId } } }));
      out.result({ hookId, deleted: true }, () => [`deleted ${hookId}`]);
    },
  );

  clientAction(
    hooks
      .command('send <url>')
      .description('sign a JSON body with a Standard Webhooks secret and POST it, as a sender would (no API key)')
      .requiredOption('--secret <secret>', 'the hook’s whsec_… secret')
      .requiredOption('--data <json>', 'the JSON body'),
    z.tuple([z.string(), z.object({ secret: z.string(), data: z.string() })]),
    async ({ out }, [url, opts]) => {
      if (!opts.secret.startsWith('whsec_'))
        throw new CliError('--secret: a Standard Webhooks secret starts with whsec_');
      try {
        JSON.parse(opts.data);
      } catch {
        throw new CliError('--data: not JSON');
      }
      const headers = signedHeaders([opts.secret], `msg_${randomUUID()}`, Math.floor(Date.now() / 1000), opts.data);
      const answer = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: opts.data,
      }).catch((err: unknown) => {
        throw new CliError(
          `cannot reach ${url}: ${err instanceof Error ? err.message : String(err)}`,
          exitCodes.unavailable,
        );
      });
      const body = (await answer.json().catch(() => ({}))) as { message?: unknown; caseId?: unknown };
      if (!answer.ok) {
        const message = typeof body.message === 'string' ? body.message : answer.statusText;
        throw new CliError(
          `${message} (HTTP ${answer.status})`,
          answer.status >= 500 ? exitCodes.unavailable : exitCodes.refused,
          [],
          body,
        );
      }
      out.result(body, () => [
        `HTTP ${answer.status}: case ${typeof body.caseId === 'string' ? body.caseId : '?'} started`,
      ]);
    },
  );
}
