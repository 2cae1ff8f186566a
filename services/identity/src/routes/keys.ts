import {
  createApiKeyBody,
  keyHashParams,
  listApiKeysQuery,
  updateApiKeyBody,
  type ApiKey,
} from "@switchyard/contracts";
import { managementCallerOf, parseInput, updateBody } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { createKey, deleteKey, getKey, listKeys, updateKey, type KeyDeps } from "../keys/service.js";
import { defaultWorkspaceId } from "../organizations.js";

/** `GET /keys`: the organization's keys, oldest first, paginated by offset. */
export const listKeysRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listApiKeysQuery, req.query, "query");
    res.json(
      await listKeys(deps.db, caller.organizationId, {
        offset: query.offset ?? 0,
        limit: query.limit ?? 100,
        includeDisabled: query.include_disabled ?? false,
        workspaceId: query.workspace_id,
      }),
    );
  };

/** `POST /keys`: the secret is in this response and nowhere else, ever. */
export const createKeyRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(createApiKeyBody, req.body, "body");
    const workspace = await defaultWorkspaceId(deps.db, caller.organizationId);
    const { record, secret } = await createKey(deps, caller.organizationId, workspace, body);
    res.status(201).json({ data: record, key: secret } satisfies { data: ApiKey; key: string });
  };

export const getKeyRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { hash } = parseInput(keyHashParams, req.params, "path");
    res.json({ data: await getKey(deps.db, caller.organizationId, hash) });
  };

/** `PATCH /keys/{hash}`: the spec's update; a key of another organization is a 404, never a 403. */
export const updateKeyRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { hash } = parseInput(keyHashParams, req.params, "path");
    const body = parseInput(updateApiKeyBody, updateBody(req), "body");
    res.json({ data: await updateKey(deps, caller.organizationId, hash, body) });
  };

export const deleteKeyRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { hash } = parseInput(keyHashParams, req.params, "path");
    await deleteKey(deps, caller.organizationId, hash);
    res.json({ deleted: true });
  };
