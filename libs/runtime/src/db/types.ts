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

/**
 * Whether a write failed for what it wrote, so that writing the same again fails the same way: an event the
 * registry refuses (zod, before the statement is sent), or a row Postgres refuses for its data (SQLSTATE
 * class 22, a value out of range or not of its type; class 23, a constraint). Anything else (no connection,
 * a server shutting down, a table away) is the database's, and passes.
 */
export function refusedForData(error: unknown): boolean {
  if (error instanceof Error && error.name === "ZodError") return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}
