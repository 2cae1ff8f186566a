import type { Db, Migration } from "../db/types.js";
import type { Logger } from "../log.js";

/**
 * Outbox and inbox rows are bookkeeping, not records: without pruning the inbox would grow with every
 * event for as long as the gateway runs (the relay deletes published outbox rows itself; what is left
 * to prune there are parked rows). The indexes find old rows without reading the whole table.
 */
export function outboxPruningMigration(schema: string): Migration {
  return {
    id: "000_outbox_inbox_pruning",
    sql: `
CREATE INDEX outbox_published ON ${schema}.outbox (published_at) WHERE published_at IS NOT NULL;
CREATE INDEX inbox_handled ON ${schema}.inbox (handled_at);
`,
  };
}

export interface PruningOptions {
  /**
   * Handled event ids are kept while the event could still come again: longer than the streams keep
   * events (seven days), so no redelivery can find its id gone.
   */
  inboxRetentionMs: number;
  /** Rows an invalid event left parked are kept this long, for the operator to see why. */
  parkedRetentionMs: number;
  everyMs: number;
}

export const defaultPruning: PruningOptions = {
  inboxRetentionMs: 8 * 24 * 60 * 60 * 1000,
  parkedRetentionMs: 30 * 24 * 60 * 60 * 1000,
  everyMs: 5 * 60 * 1000,
};

/** Rows deleted per statement, so a large backlog never holds locks (or PGlite's one connection) for long. */
const chunk = 5000;

/** Deletes old outbox and inbox rows of one schema, a chunk at a time; resolves with how many went. */
export async function pruneOnce(db: Db, schema: string, options: PruningOptions): Promise<number> {
  const seconds = (ms: number) => String(ms / 1000);
  const statements: Array<[string, string[]]> = [
    [
      `DELETE FROM ${schema}.outbox WHERE seq IN (
         SELECT seq FROM ${schema}.outbox
         WHERE published_at IS NOT NULL
           -- Rows marked published and kept by earlier versions go at once; parked rows after their retention.
           AND (last_error IS DISTINCT FROM 'invalid event' OR published_at < now() - make_interval(secs => $1::float8))
         ORDER BY published_at LIMIT ${chunk})
       RETURNING 1`,
      [seconds(options.parkedRetentionMs)],
    ],
    [
      `DELETE FROM ${schema}.inbox WHERE (consumer, event_id) IN (
         SELECT consumer, event_id FROM ${schema}.inbox WHERE handled_at < now() - make_interval(secs => $1::float8)
         ORDER BY handled_at LIMIT ${chunk})
       RETURNING 1`,
      [seconds(options.inboxRetentionMs)],
    ],
  ];
  let total = 0;
  for (const [sql, params] of statements) {
    for (;;) {
      const deleted = (await db.query(sql, params)).length;
      total += deleted;
      if (deleted < chunk) break;
    }
  }
  return total;
}

/** Prunes now and then; a failure is logged and tried again next time. */
export function startPruning(db: Db, schema: string, logger: Logger, options: PruningOptions): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= pruneOnce(db, schema, options)
      .then((deleted) => {
        if (deleted > 0) logger.debug({ schema, deleted }, "pruned outbox and inbox rows");
      })
      .catch((error: unknown) => logger.warn({ err: error, schema }, "could not prune outbox and inbox rows; will try again"))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, options.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
