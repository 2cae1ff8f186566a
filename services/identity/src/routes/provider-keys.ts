import { badRequest, managementCallerOf, notFound, parseInput, updateBody, HttpError, type Db, type EventSink, type Queryable } from "@switchyard/runtime";
import {
  openProviderKeyBody,
  providerKeyParams,
  putProviderKeyBody,
  workspaceIdParams,
  type DeleteProviderKeyResponse,
  type ProviderKeySummary,
} from "@switchyard/contracts";
import type { RequestHandler } from "express";
import { deleteProviderKey, listProviderKeys, openProviderKey, putProviderKey } from "../provider-keys/records.js";
import type { Sealer } from "../provider-keys/sealed.js";
import { getWorkspace } from "../workspaces/service.js";

export interface ProviderKeyDeps {
  db: Db;
  events: EventSink;
  workspaceChanged?: (id: string) => void;
  /** Undefined when the deployment has no encryption secret: keys can then not be stored. */
  sealer: Sealer | undefined;
  /** Whether the operator's catalog has the provider (asked of catalog). */
  knownProvider(slug: string): Promise<boolean>;
}

/**
 * The workspace's keys decide which key routing uses, so a change tells every service that remembers a
 * workspace's policy (catalog, inference and media replicas) to forget it.
 */
async function changed(deps: ProviderKeyDeps, tx: Queryable, workspace: { id: string; default_guardrail_id: string }, organizationId: string) {
  await deps.events.enqueue(tx, "identity.workspace.updated.v1", { id: workspace.id, organization_id: organizationId, default_guardrail_id: workspace.default_guardrail_id });
}

function sealerOf(deps: ProviderKeyDeps): Sealer {
  if (!deps.sealer) throw new HttpError("unavailable", "Provider keys cannot be stored: set SWITCHYARD_ENCRYPTION_KEY (32+ characters, the same for every identity replica)");
  return deps.sealer;
}

/** `PUT /workspaces/{id}/provider-keys/{provider}`: the workspace's own key (BYOK), sealed at rest. */
export const putProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id, provider } = parseInput(providerKeyParams, req.params, "path");
    const body = parseInput(putProviderKeyBody, updateBody(req), "body");
    const workspace = await getWorkspace(deps.db, caller.organizationId, id);
    const sealer = sealerOf(deps);
    if (!(await deps.knownProvider(provider))) throw badRequest(`Invalid path: provider: the catalog has no provider ${provider}`);
    const summary = await deps.db.transaction(async (tx) => {
      const saved = await putProviderKey(tx, sealer, id, provider, body.key, body.operator_fallback);
      await changed(deps, tx, workspace, caller.organizationId);
      return saved;
    });
    deps.events.committed();
    deps.workspaceChanged?.(id);
    res.json({ data: summary });
  };

/** `GET /workspaces/{id}/provider-keys`: which providers have a key, by label only. */
export const listProviderKeysRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(workspaceIdParams, req.params, "path");
    await getWorkspace(deps.db, caller.organizationId, id);
    res.json({ data: await listProviderKeys(deps.db, id) } satisfies { data: ProviderKeySummary[] });
  };

export const deleteProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id, provider } = parseInput(providerKeyParams, req.params, "path");
    const workspace = await getWorkspace(deps.db, caller.organizationId, id);
    const deleted = await deps.db.transaction(async (tx) => {
      if (!(await deleteProviderKey(tx, id, provider))) return false;
      await changed(deps, tx, workspace, caller.organizationId);
      return true;
    });
    if (!deleted) throw notFound(`No ${provider} key in this workspace`);
    deps.events.committed();
    deps.workspaceChanged?.(id);
    res.json({ deleted: true } satisfies DeleteProviderKeyResponse);
  };

/**
 * `POST /internal/provider-keys/open`: a service about to call a provider with the workspace's key. A
 * workspace of another organization than `organization_id` answers as one without a key.
 */
export const openProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const { organization_id, workspace_id, provider } = parseInput(openProviderKeyBody, req.body, "body");
    const key = deps.sealer ? await openProviderKey(deps.db, deps.sealer, workspace_id, provider, organization_id) : undefined;
    res.json({ data: { key: key ?? null } });
  };
