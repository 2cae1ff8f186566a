import { managementCallerOf, notFound, parseInput, HttpError, type Db } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { z } from "zod";
import { byokProviders, deleteProviderKey, listProviderKeys, openProviderKey, putProviderKey } from "../provider-keys/records.js";
import type { Sealer } from "../provider-keys/sealed.js";
import { getWorkspace } from "../workspaces/service.js";

export interface ProviderKeyDeps {
  db: Db;
  /** Undefined when the deployment has no encryption secret: keys can then not be stored. */
  sealer: Sealer | undefined;
}

const workspaceParams = z.object({ id: z.uuid() });
const keyParams = workspaceParams.extend({ provider: z.enum(byokProviders) });
const putBody = z.object({ key: z.string().min(8, "must be a provider API key").max(512).regex(/^\S+$/, "must not contain spaces") });

function sealerOf(deps: ProviderKeyDeps): Sealer {
  if (!deps.sealer) throw new HttpError("unavailable", "Provider keys cannot be stored: set SWITCHYARD_ENCRYPTION_KEY (32+ characters, the same for every identity replica)");
  return deps.sealer;
}

/** `PUT /workspaces/{id}/provider-keys/{provider}`: the workspace's own key (BYOK), sealed at rest. */
export const putProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id, provider } = parseInput(keyParams, req.params, "path");
    const { key } = parseInput(putBody, req.body ?? {}, "body");
    await getWorkspace(deps.db, caller.organizationId, id);
    res.json({ data: await putProviderKey(deps.db, sealerOf(deps), id, provider, key) });
  };

/** `GET /workspaces/{id}/provider-keys`: which providers have a key, by label only. */
export const listProviderKeysRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(workspaceParams, req.params, "path");
    await getWorkspace(deps.db, caller.organizationId, id);
    res.json({ data: await listProviderKeys(deps.db, id) });
  };

export const deleteProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id, provider } = parseInput(keyParams, req.params, "path");
    await getWorkspace(deps.db, caller.organizationId, id);
    if (!(await deleteProviderKey(deps.db, id, provider))) throw notFound(`No ${provider} key in this workspace`);
    res.json({ deleted: true });
  };

const openBody = z.object({ workspace_id: z.uuid(), provider: z.enum(byokProviders) });

/** `POST /internal/provider-keys/open`: a service about to call a provider with the workspace's key. */
export const openProviderKeyRoute =
  (deps: ProviderKeyDeps): RequestHandler =>
  async (req, res) => {
    const { workspace_id, provider } = parseInput(openBody, req.body, "body");
    const key = deps.sealer ? await openProviderKey(deps.db, deps.sealer, workspace_id, provider) : undefined;
    res.json({ data: { key: key ?? null } });
  };
