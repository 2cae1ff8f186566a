import type { Db, Migration } from "./types.js";

const schemaName = /^[a-z_][a-z0-9_]*$/;

/**
 * Applies a service's migrations inside its own schema, each once, in order.
 * An advisory lock keyed on the schema makes concurrent replicas wait for each other.
 */
export async function migrate(db: Db, schema: string, migrations: readonly Migration[]): Promise<string[]> {
  if (!schemaName.test(schema)) throw new Error(`invalid schema name: ${schema}`);
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`switchyard.migrate.${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set((await tx.query<{ id: string }>(`SELECT id FROM ${schema}.migrations`)).map((r) => r.id));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query(`INSERT INTO ${schema}.migrations (id) VALUES ($1)`, [migration.id]);
      applied.push(migration.id);
    }
    return applied;
  });
}

/** Migrations are plain DDL without dollar-quoted bodies, so splitting on `;` at line ends is safe. */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
