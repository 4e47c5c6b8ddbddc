import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { redactedPaths } from '../../src/logging/logger.js';

describe('structured logs', () => {
  it('redacts keys, tokens and credential data before a line is written', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ redact: { paths: redactedPaths, censor: '[redacted]' } }, sink);
    logger.info({
      req: { headers: { 'x-service-key': 'cf_abc_secret1', authorization: 'Bearer cf_abc_secret2' } },
      connection: { credentialData: { api_token: 'secret3' }, clientSecret: 'secret4' },
      oauth: { accessToken: 'secret5', refreshToken: 'secret6' },
    });
    const line = lines.join('');
    expect(JSON.parse(line)).toMatchObject({ req: { headers: { 'x-service-key': '[redacted]', authorization: '[redacted]' } } });
    for (const secret of ['secret1', 'secret2', 'secret3', 'secret4', 'secret5', 'secret6']) expect(line).not.toContain(secret);
  });
});
