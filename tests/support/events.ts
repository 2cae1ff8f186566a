import { randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";

/** A valid `identity.api_key.updated.v1` envelope with a fresh id. */
export const keyEvent = (hash = "h"): EventEnvelope => ({
  id: randomUUID(),
  subject: "identity.api_key.updated.v1",
  occurred_at: new Date().toISOString(),
  data: { hash, organization_id: randomUUID(), workspace_id: randomUUID() },
});
