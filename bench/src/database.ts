import { randomBytes } from "node:crypto";
import pg from "pg";

/** A database on the Postgres server of `serverUrl` (named `name`, else at random), made now and dropped (WITH FORCE) by `drop`. */
export async function freshDatabase(serverUrl: string, name = `switchyard_bench_${randomBytes(6).toString("hex")}`) {
  const admin = () => new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  const client = admin();
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = admin();
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
