import { randomBytes } from "node:crypto";
import pg from "pg";
import { testEnv } from "./config.js";

export interface TestDatabase {
  /** A Postgres URL of a database made for this test alone; undefined means use embedded PGlite. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** A fresh database on the configured server, so tests never see each other's rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = testEnv.databaseUrl;
  if (!server) return { url: undefined, drop: async () => {} };
  const name = `sy_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
