import { toPico, picoToUsd, type Db, type Queryable } from "@switchyard/runtime";
import { changingBindings } from "./memory-holds.js";

/** What `total_credits` reads when the operator set no limit: the largest limit Switchyard takes, which never runs out. */
export const noCreditLimit = 1e9;

/** The organization's credit limit and its keys' settled spend (BYOK excluded), as `GET /credits` answers them. */
export async function credits(db: Queryable, organizationId: string): Promise<{ total_credits: number; total_usage: number }> {
  const [row] = await db.query<{ credit_limit: string | null; spent: string }>(
    `SELECT o.credit_limit::text, coalesce(s.cost, 0)::text AS spent
     FROM identity.organizations o LEFT JOIN identity.organization_spend s ON s.organization_id = o.id WHERE o.id = $1`,
    [organizationId],
  );
  return {
    total_credits: row?.credit_limit == null ? noCreditLimit : picoToUsd(toPico(row.credit_limit)),
    total_usage: picoToUsd(toPico(row?.spent ?? "0")),
  };
}

/**
 * Sets (or, with null, removes) the organization's credit limit. It waits for the holds being written, which
 * share-lock the organization's row until they are: every hold after it is checked against the new limit.
 */
export async function setCreditLimit(db: Db, organizationId: string, limit: number | null): Promise<void> {
  await changingBindings(db, () =>
    db.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM identity.organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
      await tx.query(`UPDATE identity.organizations SET credit_limit = $2 WHERE id = $1`, [organizationId, limit === null ? null : String(limit)]);
    }),
  );
}
