import { createHmac, timingSafeEqual } from 'node:crypto';
import { signature as standardSignature } from '../callbacks/signing.js';
import type { HookScheme } from '../domain/hooks.js';

/** What verification reads of a delivery: the body's bytes and its headers (names in lower case). */
export interface SignedDelivery {
  rawBody: Buffer;
  header(name: string): string | undefined;
}

export interface VerifyOptions {
  scheme: HookScheme;
  /** The secrets in force: the current one, then the previous one during its grace period. */
  secrets: readonly string[];
  /** The hmac-sha256 scheme's header (lower case). */
  signatureHeader: string | null;
  /** How far a signed timestamp (Standard Webhooks, Stripe) may be from now. */
  toleranceSeconds: number;
  nowSeconds: number;
}

/** A verified delivery, with the id its sender gives it (Standard Webhooks' webhook-id, GitHub's delivery GUID). */
export type Verification = { ok: true; deliveryId?: string } | { ok: false; reason: string };

const hmac = (key: string | Buffer, content: string | Buffer) => createHmac('sha256', key).update(content);

/** Constant-time equality of two texts (a length difference is not secret: signatures have a fixed length). */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function anyMatches(sent: readonly string[], expected: readonly string[]): boolean {
  // Every pair is compared, so the time taken says nothing about which one matched.
  let matched = false;
  for (const s of sent) for (const e of expected) matched = sameText(s, e) || matched;
  return matched;
}

function timestampProblem(text: string | undefined, options: VerifyOptions): string | undefined {
  if (text === undefined || !/^\d{1,12}$/.test(text)) return 'the signed timestamp is missing or not unix seconds';
  if (Math.abs(options.nowSeconds - Number(text)) > options.toleranceSeconds)
    return `the signed timestamp is more than ${options.toleranceSeconds} s away from now (a replay, or a clock off)`;
  return undefined;
}

/** Standard Webhooks: `v1,<base64>` entries over `${id}.${timestamp}.${body}` with the whsec_ key's bytes. */
function standardWebhooks(delivery: SignedDelivery, options: VerifyOptions): Verification {
  const id = delivery.header('webhook-id');
  const timestamp = delivery.header('webhook-timestamp');
  const sent = delivery.header('webhook-signature');
  if (!id || !sent) return { ok: false, reason: 'webhook-id, webhook-timestamp and webhook-signature are required' };
  const late = timestampProblem(timestamp, options);
  if (late) return { ok: false, reason: late };
  const body = delivery.rawBody.toString('utf8');
  const expected = options.secrets.map((secret) => standardSignature(secret, id, Number(timestamp), body));
  if (!anyMatches(sent.split(' ').filter(Boolean), expected))
    return { ok: false, reason: 'webhook-signature does not match' };
  return { ok: true, deliveryId: id };
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex>` over the body, the secret's text as the key. */
function github(delivery: SignedDelivery, options: VerifyOptions): Verification {
  const sent = delivery.header('x-hub-signature-256');
  if (!sent) return { ok: false, reason: 'X-Hub-Signature-256 is required' };
  const expected = options.secrets.map((secret) => `sha256=${hmac(secret, delivery.rawBody).digest('hex')}`);
  if (!anyMatches([sent], expected)) return { ok: false, reason: 'X-Hub-Signature-256 does not match' };
  return { ok: true, deliveryId: delivery.header('x-github-delivery') };
}

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]` over `${t}.${body}`, the secret's text as the key. */
function stripe(delivery: SignedDelivery, options: VerifyOptions): Verification {
  const sent = delivery.header('stripe-signature');
  if (!sent) return { ok: false, reason: 'Stripe-Signature is required' };
  const pairs = sent.split(',').map((part) => {
    const at = part.indexOf('=');
    return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
  });
  const timestamp = pairs.find(([name]) => name === 't')?.[1];
  const late = timestampProblem(timestamp, options);
  if (late) return { ok: false, reason: late };
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), delivery.rawBody]);
  const expected = options.secrets.map((secret) => hmac(secret, signed).digest('hex'));
  const v1 = pairs.filter(([name]) => name === 'v1').map(([, value]) => value);
  if (!anyMatches(v1, expected)) return { ok: false, reason: 'Stripe-Signature has no matching v1 signature' };
  return { ok: true };
}

/** Generic: the named header holds the hex HMAC-SHA256 of the body (optionally `sha256=`-prefixed). */
function genericHmac(delivery: SignedDelivery, options: VerifyOptions): Verification {
  const name = options.signatureHeader ?? '';
  const sent = delivery.header(name);
  if (!sent) return { ok: false, reason: `${name} is required` };
  const hex = sent.startsWith('sha256=') ? sent.slice('sha256='.length) : sent;
  const expected = options.secrets.map((secret) => hmac(secret, delivery.rawBody).digest('hex'));
  if (!anyMatches([hex.toLowerCase()], expected)) return { ok: false, reason: `${name} does not match` };
  return { ok: true };
}

const verifiers: Record<HookScheme, (delivery: SignedDelivery, options: VerifyOptions) => Verification> = {
  'standard-webhooks': standardWebhooks,
  github,
  stripe,
  'hmac-sha256': genericHmac,
};

/** Whether the delivery is signed with one of the hook's secrets under its scheme, within the timestamp tolerance. */
export function verifyDelivery(delivery: SignedDelivery, options: VerifyOptions): Verification {
  return verifiers[options.scheme](delivery, options);
}
