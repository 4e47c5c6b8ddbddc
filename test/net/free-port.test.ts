import { expect, it } from 'vitest';
import { freePort } from '../../src/net/free-port.js';

it('never hands out a port twice while its taker lives, though none was bound in between', async () => {
  // 600 draws from 12,768 ports repeat one almost surely (birthday bound) unless taken ports are kept out.
  const ports: number[] = [];
  for (let i = 0; i < 600; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
});
