import type { TestService } from '../support/harness.js';

export interface Violation {
  path: string;
  message: string;
}

/** The violations a 400 names, from a raw response's body or a typed client call's error. */
export function violations(body: { metadata?: unknown } | undefined): Violation[] {
  return (body?.metadata as { violations?: Violation[] } | undefined)?.violations ?? [];
}

export async function countWorkflows(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countVersions(svc: TestService): Promise<number> {
  const row = await svc.service.context.store.db
    .selectFrom('workflow_versions')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
