import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** The machine's Postgres (CI has one at this address; override with TEST_POSTGRES_URL). */
export const postgresBaseUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface PostgresSchema {
  /** A DATABASE_URL whose search_path is a fresh schema. */
  url: string;
  drop(): Promise<void>;
}

/** A private schema per test file, so files run in parallel and leave nothing behind. */
export async function createPostgresSchema(): Promise<PostgresSchema> {
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: postgresBaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = `${postgresBaseUrl}${postgresBaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    url,
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresBaseUrl });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}
