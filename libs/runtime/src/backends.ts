import { join } from "node:path";
import { connectNatsBus, createMemoryBus } from "./bus/index.js";
import type { Bus } from "./bus/types.js";
import { compileWasmOptimisedOnly, openDatabase } from "./db/index.js";
import type { Db } from "./db/types.js";
import type { Logger } from "./log.js";

export interface BackendConfig {
  DATABASE_URL?: string | undefined;
  DATABASE_PREPARED_STATEMENTS?: boolean;
  NATS_URL?: string | undefined;
  NATS_NAMESPACE?: string | undefined;
  SWITCHYARD_DATA_DIR: string;
}

/**
 * Real Postgres and NATS when configured, else the embedded PGlite and the in-process bus. `holdEvents`:
 * the in-process bus keeps what is published until its `release` (see `createMemoryBus`).
 */
export async function openBackends(config: BackendConfig, logger: Logger, name: string, options: { holdEvents?: boolean } = {}): Promise<{ db: Db; bus: Bus }> {
  // A service run as its own process keeps embedded data in its own folder: PGlite is one process's alone.
  const dataDir = name === "standalone" ? config.SWITCHYARD_DATA_DIR : join(config.SWITCHYARD_DATA_DIR, name);
  if (!config.DATABASE_URL) compileWasmOptimisedOnly();
  const db = await openDatabase({ url: config.DATABASE_URL, preparedStatements: config.DATABASE_PREPARED_STATEMENTS, dataDir, applicationName: name, logger });
  const bus = config.NATS_URL
    ? await connectNatsBus({ url: config.NATS_URL, namespace: config.NATS_NAMESPACE, logger, name })
    : createMemoryBus({ logger, held: options.holdEvents ?? false });
  logger.info({ database: db.kind, bus: bus.kind }, "backends ready");
  return { db, bus };
}

/**
 * A service run as its own process whose events other processes must see (charges, deletions, key changes)
 * cannot run on the in-process bus, which no other process reads: without NATS_URL it stops at start, saying
 * `why`, as the router does.
 */
export function requireNatsAlone(config: BackendConfig, logger: Logger, name: string, why: string): void {
  if (config.NATS_URL) return;
  logger.fatal(`${name} as its own process needs NATS_URL: ${why} (use standalone for one process)`);
  process.exit(1);
}
