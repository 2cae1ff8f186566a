import type { GuardrailBudget } from "@switchyard/contracts";
import { ServiceUnavailableError, type Db, type Logger, type Queryable } from "@switchyard/runtime";
import type { IdentityLookup } from "../policy/identity-lookup.js";
import { guardrailColumns, type GuardrailRow } from "./records.js";

/** What identity holds of a guardrail: its budget and the keys it binds, or nothing (`limit_usd` null). */
async function budgetOf(tx: Queryable, row: GuardrailRow, exists: boolean): Promise<GuardrailBudget> {
  const limit = exists ? row.limit_usd : null;
  const keys = limit === null ? [] : await tx.query<{ key_hash: string }>(`SELECT key_hash FROM catalog.guardrail_keys WHERE guardrail_id = $1`, [row.id]);
  return {
    guardrail_id: row.id,
    organization_id: row.organization_id,
    limit_usd: limit,
    reset_interval: row.reset_interval,
    include_byok: row.include_byok_in_budgets,
    key_hashes: keys.map((k) => k.key_hash),
  };
}

/**
 * Tells identity, inside the transaction that changed the guardrail (whose row it has locked), what its
 * budget now is. Should identity not confirm, the change is rolled back and the caller told 503: a budget
 * stored here but not where holds are taken would be a limit that does not bind.
 */
export async function writeBudget(identity: IdentityLookup, tx: Queryable, row: GuardrailRow, exists = true): Promise<void> {
  const budget = await budgetOf(tx, row, exists);
  try {
    await identity.writeBudgets([budget]);
  } catch (error) {
    throw new ServiceUnavailableError(`identity could not record the budget of guardrail ${row.id}; nothing was changed`, { cause: error });
  }
}

/**
 * Writes every guardrail's budget to identity again, in batches of at most 100 guardrails and 10,000 keys,
 * each under share locks of its guardrails' rows so that no change in flight is overwritten by an older
 * state. Catalog runs it at start: it fills identity on a first start after an upgrade, and repairs a change
 * whose commit failed after identity had written it.
 */
export async function writeAllBudgets(db: Db, identity: IdentityLookup): Promise<number> {
  let after = "";
  let written = 0;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const rows = await tx.query<GuardrailRow>(
        `SELECT ${guardrailColumns} FROM catalog.guardrails WHERE id::text > $1 ORDER BY id::text LIMIT 100 FOR SHARE`,
        [after],
      );
      const budgets: GuardrailBudget[] = [];
      let keys = 0;
      for (const row of rows) {
        const budget = await budgetOf(tx, row, true);
        if (budgets.length && keys + budget.key_hashes.length > 10_000) {
          await identity.writeBudgets(budgets.splice(0));
          keys = 0;
        }
        budgets.push(budget);
        keys += budget.key_hashes.length;
      }
      if (budgets.length) await identity.writeBudgets(budgets);
      return rows;
    });
    written += batch.length;
    if (batch.length < 100) return written;
    after = batch.at(-1)!.id;
  }
}

/** Runs `writeAllBudgets` until it succeeds (identity may start after catalog), every `retryMs`. */
export function keepWritingAllBudgets(db: Db, identity: IdentityLookup, logger: Logger, retryMs = 5000): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const attempt = () => {
    running = writeAllBudgets(db, identity).then(
      (n) => logger.debug({ guardrails: n }, "guardrail budgets written to identity"),
      (error: unknown) => {
        if (stopped) return;
        logger.warn({ err: error }, "could not write guardrail budgets to identity; trying again");
        timer = setTimeout(attempt, retryMs);
      },
    );
  };
  attempt();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
