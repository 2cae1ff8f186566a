import { holdOwnerResponse, holdResponse, openProviderKeyResponse, releaseHoldResponse, resolveModelResponse, type ResolvedModel, type ResolveRequest } from "@switchyard/contracts";
import { notFound, type InternalClient } from "@switchyard/runtime";
import type { IdentityHolds } from "./holds.js";

/** Catalog's model resolution over HTTP, for a service that runs as its own process. */
export const remoteResolve =
  (catalog: InternalClient) =>
  async (request: ResolveRequest): Promise<ResolvedModel> => {
    const body = { model: request.model, default_for: request.defaultFor, key_hash: request.keyHash, workspace_id: request.workspaceId, organization_id: request.organizationId, host: request.host };
    const answer = await catalog.post("/internal/models/resolve", body, resolveModelResponse);
    if (!answer) throw notFound(`Model ${request.model} not found`);
    return answer.data;
  };

/** Identity's spend holds over HTTP. */
export const remoteHolds = (identity: InternalClient): IdentityHolds => ({
  async hold(request) {
    const answer = await identity.post("/internal/holds", request, holdResponse);
    if (!answer) throw new Error("identity has no /internal/holds route");
    return answer.data;
  },
  async release(generationId) {
    return (await identity.post("/internal/holds/release", { generation_id: generationId }, releaseHoldResponse))?.released ?? false;
  },
  renew: (owner, leaseMs) => ownerCall(identity, "/internal/holds/renew", { owner, lease_ms: leaseMs }),
  releaseOwner: (owner) => ownerCall(identity, "/internal/holds/release-owner", { owner }),
  detach: (owner) => ownerCall(identity, "/internal/holds/detach", { owner }),
});

async function ownerCall(identity: InternalClient, path: string, body: Record<string, unknown>): Promise<number> {
  const answer = await identity.post(path, body, holdOwnerResponse);
  if (!answer) throw new Error(`identity has no ${path} route`);
  return answer.holds;
}

/** A workspace's own provider key, opened by identity over HTTP. */
export const remoteProviderKey =
  (identity: InternalClient) =>
  async (workspaceId: string, provider: string): Promise<string | undefined> =>
    (await identity.post("/internal/provider-keys/open", { workspace_id: workspaceId, provider }, openProviderKeyResponse))?.data.key ?? undefined;
