import type { GuardrailBudget } from "@switchyard/contracts";
import type { Db } from "@switchyard/runtime";
import { guardrailLock } from "./holds.js";
import { changingBindings } from "./memory-holds.js";

/**
 * Writes what catalog says of each guardrail's budget: its limit and window and every key it binds, or its
 * removal (`limit_usd` null). Each guardrail's lock, which holds share, is taken alone, so a change waits
 * for the holds being decided against the old budget and binds every one after it. Idempotent: catalog sends the
 * whole state, and sends it again when it is unsure identity has it.
 */
export function writeBudgets(db: Db, budgets: readonly GuardrailBudget[]): Promise<void> {
  return changingBindings(db, () => write(db, budgets));
}

async function write(db: Db, budgets: readonly GuardrailBudget[]): Promise<void> {
  const ordered = [...budgets].sort((a, b) => (a.guardrail_id < b.guardrail_id ? -1 : a.guardrail_id > b.guardrail_id ? 1 : 0));
  await db.transaction(async (tx) => {
    for (const budget of ordered) {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [guardrailLock(budget.guardrail_id)]);
      if (budget.limit_usd === null) {
        await tx.query(`DELETE FROM identity.guardrail_budgets WHERE guardrail_id = $1`, [budget.guardrail_id]);
        continue;
      }
      await tx.query(
        `INSERT INTO identity.guardrail_budgets (guardrail_id, organization_id, limit_usd, reset_interval, include_byok)
         VALUES ($1, $2, $3::numeric, $4, $5)
         ON CONFLICT (guardrail_id) DO UPDATE SET organization_id = excluded.organization_id, limit_usd = excluded.limit_usd,
           reset_interval = excluded.reset_interval, include_byok = excluded.include_byok, updated_at = now()`,
        [budget.guardrail_id, budget.organization_id, budget.limit_usd, budget.reset_interval, budget.include_byok],
      );
      await tx.query(`DELETE FROM identity.guardrail_budget_keys WHERE guardrail_id = $1 AND key_hash <> ALL($2::text[])`, [
        budget.guardrail_id,
        budget.key_hashes,
      ]);
      await tx.query(
        `INSERT INTO identity.guardrail_budget_keys (key_hash, guardrail_id) SELECT DISTINCT unnest($2::text[]), $1 ON CONFLICT DO NOTHING`,
        [budget.guardrail_id, budget.key_hashes],
      );
    }
  });
}
