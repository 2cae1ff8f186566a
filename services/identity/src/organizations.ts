import { randomUUID } from "node:crypto";
import type { Queryable } from "@switchyard/runtime";
import { createKey, type KeyDeps } from "./keys/service.js";
import { hashSecret } from "@switchyard/runtime";
import { insertWorkspace } from "./workspaces/service.js";

export interface NewOrganization {
  organizationId: string;
  workspaceId: string;
  managementKey: string;
}

/** An organization with its default workspace and a first management key (the secret is returned once). */
export async function createOrganization(deps: KeyDeps, name: string, managementSecret?: string): Promise<NewOrganization> {
  const organizationId = randomUUID();
  const workspace = await deps.db.transaction(async (tx) => {
    await tx.query(`INSERT INTO identity.organizations (id, name) VALUES ($1, $2)`, [organizationId, name]);
    const row = await insertWorkspace(tx, organizationId, { name: "Default", slug: "default" }, { isDefault: true });
    await deps.events.enqueue(tx, "identity.workspace.created.v1", {
      id: row.id,
      organization_id: organizationId,
      default_guardrail_id: row.default_guardrail_id,
    });
    return row;
  });
  const { secret } = await createKey(deps, organizationId, workspace.id, { name: "Management key", is_management_key: true }, managementSecret);
  return { organizationId, workspaceId: workspace.id, managementKey: secret };
}

export async function defaultWorkspaceId(db: Queryable, organizationId: string): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    `SELECT id::text FROM identity.workspaces WHERE organization_id = $1 AND is_default`,
    [organizationId],
  );
  if (!row) throw new Error(`organization ${organizationId} has no default workspace`);
  return row.id;
}

export type BootstrapResult =
  | { kind: "existing" }
  | { kind: "configured"; organizationId: string }
  | { kind: "generated"; organizationId: string; managementKey: string };

/**
 * Makes sure an operator can get in: with a configured secret, a management key with exactly that secret
 * exists (idempotent); otherwise an empty database gets one generated management key, shown once.
 * An advisory lock keeps replicas that start together from bootstrapping twice.
 */
export async function bootstrap(deps: KeyDeps, configuredSecret: string | undefined): Promise<BootstrapResult> {
  return withBootstrapLock(deps, async () => {
    const [first] = await deps.db.query<{ id: string }>(`SELECT id::text FROM identity.organizations ORDER BY created_at LIMIT 1`);
    if (configuredSecret) {
      const [existing] = await deps.db.query(`SELECT 1 FROM identity.api_keys WHERE hash = $1`, [hashSecret(configuredSecret)]);
      if (existing) return { kind: "existing" };
      if (!first) {
        const created = await createOrganization(deps, "Default", configuredSecret);
        return { kind: "configured", organizationId: created.organizationId };
      }
      const workspaceId = await defaultWorkspaceId(deps.db, first.id);
      await createKey(deps, first.id, workspaceId, { name: "Bootstrap management key", is_management_key: true }, configuredSecret);
      return { kind: "configured", organizationId: first.id };
    }
    if (first) {
      // A gateway whose every management key was deleted, disabled or let expire could never be managed
      // again: the start makes a new one in the first organization and shows it, as on the first start.
      const [usable] = await deps.db.query(
        `SELECT 1 FROM identity.api_keys WHERE organization_id = $1 AND is_management AND NOT disabled AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
        [first.id],
      );
      if (usable) return { kind: "existing" };
      const workspaceId = await defaultWorkspaceId(deps.db, first.id);
      const made = await createKey(deps, first.id, workspaceId, { name: "Recovery management key", is_management_key: true });
      return { kind: "generated", organizationId: first.id, managementKey: made.secret };
    }
    const created = await createOrganization(deps, "Default");
    return { kind: "generated", organizationId: created.organizationId, managementKey: created.managementKey };
  });
}

async function withBootstrapLock<T>(deps: KeyDeps, fn: () => Promise<T>): Promise<T> {
  if (deps.db.kind === "pglite") return fn();
  // The lock's transaction holds one connection while fn works through others; a replica starting at
  // the same moment waits here until the first has finished. PGlite is one process and one connection.
  return deps.db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard.identity.bootstrap'))`);
    return fn();
  });
}
