import { guardrailColumns, type GuardrailRow } from "./records.js";
import { changed, type GuardrailDeps } from "./service.js";

/**
 * Deletes the guardrails of a deleted workspace, each as `DELETE /guardrails/{id}` does: its key assignments
 * go with it, identity drops its budget, and a `catalog.guardrail.deleted.v1` event clears the caches. The
 * rows are locked in id order, so two of these never wait on each other. Deleting nothing is a success: a
 * second delivery of the event finds nothing left.
 */
export async function removeWorkspaceGuardrails(
  deps: GuardrailDeps,
  organizationId: string,
  workspaceId: string,
): Promise<{ guardrails: string[]; assignments: number }> {
  const removed = await deps.db.transaction(async (tx) => {
    const rows = await tx.query<GuardrailRow>(
      `SELECT ${guardrailColumns} FROM catalog.guardrails WHERE workspace_id = $1 AND organization_id = $2 ORDER BY id FOR UPDATE`,
      [workspaceId, organizationId],
    );
    if (rows.length === 0) return { guardrails: [], assignments: 0 };
    const ids = rows.map((row) => row.id);
    const [assigned] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.guardrail_keys WHERE guardrail_id IN (SELECT unnest($1::uuid[]))`, [ids]);
    await tx.query(`DELETE FROM catalog.guardrails WHERE id IN (SELECT unnest($1::uuid[]))`, [ids]);
    for (const row of rows) await changed(deps, tx, row, "deleted");
    return { guardrails: ids, assignments: assigned?.n ?? 0 };
  });
  if (removed.guardrails.length > 0) {
    deps.events.committed();
    deps.guardrails.clear();
  }
  return removed;
}

/**
 * Removes a deleted key from every guardrail it was assigned to, so the assignment listings no longer show
 * it and the 50,000-key cap no longer counts it. Each guardrail changed writes its budget to identity and
 * emits `catalog.guardrail.updated.v1`, as `POST /guardrails/{id}/assignments/keys/remove` does. Returns the
 * guardrails it was removed from (none on a second delivery).
 */
export async function removeKeyAssignments(deps: GuardrailDeps, organizationId: string, keyHash: string): Promise<string[]> {
  const guardrails = await deps.db.transaction(async (tx) => {
    const rows = await tx.query<GuardrailRow>(
      `SELECT ${guardrailColumns} FROM catalog.guardrails
       WHERE organization_id = $2 AND id IN (SELECT guardrail_id FROM catalog.guardrail_keys WHERE key_hash = $1)
       ORDER BY id FOR UPDATE`,
      [keyHash, organizationId],
    );
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    await tx.query(`DELETE FROM catalog.guardrail_keys WHERE key_hash = $1 AND guardrail_id IN (SELECT unnest($2::uuid[]))`, [keyHash, ids]);
    for (const row of rows) await changed(deps, tx, row, "updated");
    return ids;
  });
  if (guardrails.length > 0) {
    deps.events.committed();
    deps.guardrails.clear();
  }
  return guardrails;
}
