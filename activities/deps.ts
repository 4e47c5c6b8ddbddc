import type { Infrastructure, Wiring } from '../src/composition.js';

/** What activities get from the process that hosts the worker: the same wired services as its API. */
export type ActivityDeps = Pick<Infrastructure, 'config' | 'logger' | 'python'> & Wiring;
