import type { TestService } from '../support/harness.js';

export interface Violation {
  path: string;
  message: string;
}

export function violations(body: Record<string, unknown>): Violation[] {
  return (body.metadata as { violations?: Violation[] } | undefined)?.violations ?? [];
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
