import {
  describeKeysResponse,
  guardrailBudgetsResponse,
  type GuardrailBudget,
  workspacePolicyResponse,
  type KeyDescription,
  type WorkspacePolicy,
} from "@switchyard/contracts";
import type { InternalClient } from "@switchyard/runtime";

/** What catalog asks identity: workspace policies (cached, dropped on workspace events) and key names. */
export interface IdentityLookup {
  workspacePolicy(workspaceId: string): Promise<WorkspacePolicy | undefined>;
  workspaceInOrganization(workspaceId: string, organizationId: string): Promise<boolean>;
  describeKeys(organizationId: string, hashes: readonly string[]): Promise<Map<string, KeyDescription>>;
  /** Writes guardrail budgets where identity takes holds; throws when identity did not confirm it. */
  writeBudgets(budgets: readonly GuardrailBudget[]): Promise<void>;
  /** Drops a cached policy; `identity.workspace.*` events call it. */
  forget(workspaceId: string): void;
}

export interface IdentitySource {
  workspacePolicy(workspaceId: string): Promise<WorkspacePolicy | undefined>;
  describeKeys(organizationId: string, hashes: readonly string[]): Promise<KeyDescription[]>;
  writeBudgets(budgets: readonly GuardrailBudget[]): Promise<void>;
}

/** Over identity's internal routes, for the many-process topology. */
export function httpIdentitySource(client: InternalClient): IdentitySource {
  return {
    workspacePolicy: async (id) => (await client.post("/internal/workspaces/policy", { workspace_id: id }, workspacePolicyResponse))?.data,
    describeKeys: async (organizationId, hashes) =>
      (await client.post("/internal/keys/describe", { organization_id: organizationId, hashes }, describeKeysResponse))?.data ?? [],
    writeBudgets: async (budgets) => {
      if (!(await client.post("/internal/guardrail-budgets", { budgets }, guardrailBudgetsResponse))) throw new Error("identity has no guardrail budget route");
    },
  };
}

export function identityLookup(source: IdentitySource, ttlMs = 60_000): IdentityLookup {
  const policies = new Map<string, { policy: WorkspacePolicy | undefined; until: number }>();
  const lookup: IdentityLookup = {
    async workspacePolicy(id) {
      const hit = policies.get(id);
      if (hit && hit.until > Date.now()) return hit.policy;
      const policy = await source.workspacePolicy(id);
      if (policies.size > 10_000) policies.clear();
      policies.set(id, { policy, until: Date.now() + ttlMs });
      return policy;
    },
    async workspaceInOrganization(workspaceId, organizationId) {
      return (await lookup.workspacePolicy(workspaceId))?.organization_id === organizationId;
    },
    async describeKeys(organizationId, hashes) {
      const keys = await source.describeKeys(organizationId, [...new Set(hashes)]);
      return new Map(keys.map((k) => [k.hash, k]));
    },
    writeBudgets: (budgets) => source.writeBudgets(budgets),
    forget: (id) => void policies.delete(id),
  };
  return lookup;
}
