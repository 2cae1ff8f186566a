import {
  assignKeysBody,
  createGuardrailBody,
  guardrailIdParams,
  listGuardrailsQuery,
  listKeyAssignmentsQuery,
  unassignKeysBody,
  updateGuardrailBody,
} from "@switchyard/contracts";
import { managementCallerOf, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import {
  assignKeys,
  createGuardrail,
  deleteGuardrail,
  getGuardrail,
  listAssignments,
  listGuardrails,
  unassignKeys,
  updateGuardrail,
} from "../guardrails/service.js";

/** Every guardrail operation is management-only and scoped to the caller's organization. */
export const listGuardrailsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listGuardrailsQuery, req.query, "query");
    res.json(await listGuardrails(deps.db, caller.organizationId, query.offset ?? 0, query.limit ?? 100, query.workspace_id));
  };

export const createGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(createGuardrailBody, req.body, "body");
    res.status(201).json({ data: await createGuardrail(deps, caller.organizationId, caller.workspaceId, body) });
  };

export const getGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    res.json({ data: await getGuardrail(deps.db, caller.organizationId, id) });
  };

export const updateGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    const body = parseInput(updateGuardrailBody, req.body ?? {}, "body");
    res.json({ data: await updateGuardrail(deps, caller.organizationId, id, body) });
  };

export const deleteGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    await deleteGuardrail(deps, caller.organizationId, id);
    res.json({ deleted: true });
  };

export const assignKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    const { key_hashes } = parseInput(assignKeysBody, req.body, "body");
    res.json(await assignKeys(deps, caller.organizationId, id, key_hashes, caller.keyHash));
  };

export const unassignKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    const { key_hashes } = parseInput(unassignKeysBody, req.body, "body");
    res.json(await unassignKeys(deps, caller.organizationId, id, key_hashes));
  };

export const listGuardrailKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(guardrailIdParams, req.params, "path");
    const query = parseInput(listKeyAssignmentsQuery, req.query, "query");
    res.json(await listAssignments(deps, caller.organizationId, query.offset ?? 0, query.limit ?? 100, id));
  };

export const listAllKeyAssignmentsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listKeyAssignmentsQuery, req.query, "query");
    res.json(await listAssignments(deps, caller.organizationId, query.offset ?? 0, query.limit ?? 100));
  };
