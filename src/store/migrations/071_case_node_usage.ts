import { type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // LLM tokens a node consumed (llm_agent nodes), as JSON: { prompt_tokens, completion_tokens, total_tokens }.
  await db.schema.alterTable('case_nodes').addColumn('usage', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('case_nodes').dropColumn('usage').execute();
}
