/** What a query needs: both a pool and a transaction handle satisfy it. */
export interface Queryable {
  query<T extends object = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

/**
 * One interface over `pg` (real Postgres) and PGlite (embedded Postgres).
 * SQL is written for Postgres 15; values that differ between drivers (numeric, bigint)
 * are cast in SQL (`::text`, `::int`) so both return the same JavaScript types.
 */
export interface Db extends Queryable {
  readonly kind: "postgres" | "pglite";
  /** Runs `fn` in one transaction; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Cheap liveness check for readiness probes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A service's migrations: applied in order, each once, inside the service's own schema. */
export interface Migration {
  id: string;
  sql: string;
}

/** Postgres (and PGlite) SQLSTATE 23505: an insert or update hit a unique constraint. */
export const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
