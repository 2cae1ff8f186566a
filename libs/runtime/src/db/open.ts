import { join } from "node:path";
import { openPglite } from "./pglite.js";
import type { Logger } from "../log.js";
import { openPostgres } from "./postgres.js";
import type { Db } from "./types.js";

export interface DatabaseOptions {
  /** A Postgres URL; when absent the embedded PGlite is used. */
  url?: string | undefined;
  /** Where PGlite keeps its files; when absent it lives in memory. */
  dataDir?: string | undefined;
  applicationName?: string;
  maxConnections?: number;
  /** Postgres only: see `PostgresOptions.preparedStatements`. */
  preparedStatements?: boolean | undefined;
  /** Where PGlite's own maintenance reports failures. */
  logger?: Logger;
}

export function openDatabase(options: DatabaseOptions): Promise<Db> {
  if (options.url) {
    return Promise.resolve(
      openPostgres({
        url: options.url,
        ...(options.applicationName ? { applicationName: options.applicationName } : {}),
        ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
        ...(options.preparedStatements !== undefined ? { preparedStatements: options.preparedStatements } : {}),
      }),
    );
  }
  return openPglite(options.dataDir ? join(options.dataDir, "pg") : undefined, options.logger ? { logger: options.logger } : {});
}
