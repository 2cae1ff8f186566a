import type { EventData } from "@switchyard/contracts";
import type { Bus, Logger, Subscription } from "@switchyard/runtime";
import { removeKeyAssignments, removeWorkspaceGuardrails } from "./cleanup.js";
import type { GuardrailDeps } from "./service.js";

export const deletionsConsumer = "catalog_identity_deletions";
const deletionSubjects = ["identity.workspace.deleted.v1", "identity.api_key.deleted.v1"] as const;

/**
 * Identity's deletions, applied to guardrails by one durable consumer shared by every catalog replica: a
 * deleted workspace takes its guardrails (and their key assignments) with it, a deleted key leaves every
 * guardrail it was assigned to. Both are idempotent (a second delivery removes nothing). A failure (identity
 * not confirming a budget, the database away) throws, so the bus delivers the event again with backoff; after
 * `maxDeliveries` it is parked and logged as every parked event is.
 */
export async function startDeletionsConsumer(deps: GuardrailDeps & { bus: Bus; logger: Logger }, maxDeliveries = 20): Promise<Subscription> {
  return deps.bus.consume(
    deletionsConsumer,
    deletionSubjects,
    async (event) => {
      if (event.subject === "identity.workspace.deleted.v1") {
        const { id: workspaceId, organization_id: organizationId } = event.data as EventData<"identity.workspace.deleted.v1">;
        const removed = await removeWorkspaceGuardrails(deps, organizationId, workspaceId);
        deps.logger.info({ workspaceId, organizationId, ...removed }, "removed the guardrails of a deleted workspace");
      } else if (event.subject === "identity.api_key.deleted.v1") {
        const { hash, organization_id: organizationId } = event.data as EventData<"identity.api_key.deleted.v1">;
        const guardrails = await removeKeyAssignments(deps, organizationId, hash);
        // The hash's first 12 characters name the key in logs, as the router's request lines do.
        deps.logger.info({ keyHash: hash.slice(0, 12), organizationId, guardrails }, "removed the guardrail assignments of a deleted key");
      }
    },
    { maxDeliveries },
  );
}
