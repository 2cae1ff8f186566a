export type { Db, Queryable, Migration } from "./types.js";
export { isUniqueViolation, refusedForData } from "./types.js";
export { openPostgres, type PostgresOptions } from "./postgres.js";
export { compileWasmOptimisedOnly, openPglite } from "./pglite.js";
export { migrate } from "./migrate.js";
export { openDatabase, type DatabaseOptions } from "./open.js";
