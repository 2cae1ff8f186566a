import { randomUUID } from "node:crypto";
import type { Queryable } from "@switchyard/runtime";

/**
 * An organization with a default workspace and API keys in identity's tables, for tests that place holds
 * and charges directly: each key by its hash, with a spend limit in USD or none (null).
 */
export async function organizationWithKeys(db: Queryable, keys: ReadonlyArray<readonly [hash: string, limit: string | null]>) {
  const organization = randomUUID();
  const workspace = randomUUID();
  await db.query(`INSERT INTO identity.organizations (id, name) VALUES ($1, 'Org')`, [organization]);
  await db.query(`INSERT INTO identity.workspaces (id, organization_id, name, slug, is_default, default_guardrail_id) VALUES ($1, $2, 'Default', 'default', true, $3)`, [
    workspace,
    organization,
    randomUUID(),
  ]);
  for (const [hash, limit] of keys) {
    await db.query(`INSERT INTO identity.api_keys (hash, organization_id, workspace_id, name, label, spend_limit) VALUES ($1, $2, $3, 'k', 'k', $4)`, [
      hash,
      organization,
      workspace,
      limit,
    ]);
  }
  return { organization, workspace };
}
