import {
  request as httpRequest,
  type Agent,
  type ClientRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { InflateEither } from './inflate-either.js';
import type { PinnedLookup } from './pinned-agents.js';

/**
 * A request that got no answer: the socket's error (its code, e.g. ECONNREFUSED, and message), or the timeout.
 * The messages are the ones got gave (attempts recorded before the move to node:http read the same).
 */
export class OutboundRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** No answer within the request's time, as opposed to a refused or broken connection. */
    readonly timedOut: boolean,
    /** The request went out on a kept-alive socket (one the peer may have closed meanwhile). */
    readonly reusedSocket: boolean,
  ) {
    super(message);
    this.name = 'OutboundRequestError';
  }
}

export interface Exchange {
  url: URL;
  method: string;
  headers: Record<string, string> | undefined;
  body: string | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  agent: Agent;
  /** Answers the checked address; the agent pools by it. */
  lookup: PinnedLookup;
}

export interface OutboundResponse {
  status: number;
  body: string;
}

/**
 * Compressed answers are asked for and undone, as got did, and `deflate` raw as well as zlib-wrapped (browsers read
 * both); a Map, so a header value never reaches a prototype key.
 */
const decoders = new Map<string, () => Transform>([
  ['gzip', createUnzip],
  ['deflate', () => new InflateEither()],
  ['br', createBrotliDecompress],
]);
const acceptEncoding = [...decoders.keys()].join(', ');

/**
 * Headers that frame the message or steer the connection: set by a caller (a tenant's custom auth header is one),
 * one could make a kept-alive socket, shared by every request to that address, read the next answer wrongly.
 */
const framingHeaders = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
]);

function decoded(response: IncomingMessage): Readable {
  const decoder = decoders.get(String(response.headers['content-encoding']).toLowerCase());
  // An answer that does not decode ends there (its status stands): the callback below ignores the error.
  return decoder ? pipeline(response, decoder(), () => undefined) : response;
}

/**
 * One request over node:http(s): the timeout covers everything from here to the answer's end; at most
 * maxResponseBytes of the answer are kept, and the connection is dropped once they are; an answer cut short
 * (reset, timeout, undecodable) after its status counts as that status with what was read. Rejects with an
 * OutboundRequestError when no status arrived.
 */
export function exchange(x: Exchange): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    const framing = Object.keys(x.headers ?? {}).find((name) => framingHeaders.has(name.toLowerCase()));
    if (framing !== undefined) {
      reject(new OutboundRequestError(`header ${framing} is the client's to set`, 'ERR_FRAMING_HEADER', false, false));
      return;
    }
    // No content-length here: node sets it when the whole body is given to end() (no chunked encoding).
    const headers: OutgoingHttpHeaders = { 'accept-encoding': acceptEncoding, ...x.headers };
    const send = x.url.protocol === 'https:' ? httpsRequest : httpRequest;
    let request: ClientRequest;
    try {
      request = send(x.url, { method: x.method, headers, agent: x.agent, lookup: x.lookup });
    } catch (err) {
      // A header value node refuses (a newline in a tenant's credential): no request left.
      reject(requestError(err instanceof Error ? err : new Error(String(err)), false));
      return;
    }
    let status = 0;
    let kept = 0;
    const chunks: Buffer[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
    };
    let body: Readable | undefined;
    // Destroying the request alone ends neither an answer that arrived whole (its socket is back in the pool) nor
    // its decoding, which may still be at work: the body is destroyed too.
    const drop = (err?: OutboundRequestError): void => {
      request.destroy(err);
      body?.destroy();
    };
    const timer = setTimeout(
      () => drop(new OutboundRequestError(`Timeout awaiting 'request' for ${x.timeoutMs}ms`, 'ETIMEDOUT', true, false)),
      x.timeoutMs,
    );
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (status !== 0) {
        finish();
        return;
      }
      clearTimeout(timer);
      reject(err instanceof OutboundRequestError ? err : requestError(err, request.reusedSocket));
    });
    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      const answer = decoded(response);
      body = answer;
      answer.on('data', (chunk: Buffer) => {
        if (kept >= x.maxResponseBytes) return;
        chunks.push(chunk.subarray(0, x.maxResponseBytes - kept));
        kept += Math.min(chunk.length, x.maxResponseBytes - kept);
        if (kept < x.maxResponseBytes) return;
        // Enough kept: an endless answer costs nothing more (its socket is not reused), nor a bomb's inflating.
        drop();
        finish();
      });
      answer.on('end', finish);
      answer.on('error', finish);
      answer.on('close', finish);
    });
    request.end(x.body);
  });
}

const requestError = (err: Error & { code?: unknown }, reusedSocket: boolean): OutboundRequestError =>
  new OutboundRequestError(err.message, typeof err.code === 'string' ? err.code : undefined, false, reusedSocket);
