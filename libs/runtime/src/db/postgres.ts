import pg from "pg";
import type { Db, Queryable } from "./types.js";

export interface PostgresOptions {
  url: string;
  maxConnections?: number;
  applicationName?: string;
}

export function openPostgres(options: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? "switchyard",
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on("error", () => undefined);
  const run = async <T extends object>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]) =>
    (await client.query(text, params as unknown[] | undefined)).rows as T[];
  return {
    kind: "postgres",
    query: (text, params) => run(pool, text, params),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const tx: Queryable = { query: (text, params) => run(client, text, params) };
        const result = await fn(tx);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async ping() {
      await pool.query("SELECT 1");
    },
    close: () => pool.end(),
  };
}
