import {
  assignKeysBody,
  createGuardrailBody,
  guardrailIdParams,
  listGuardrailsQuery,
  listKeyAssignmentsQuery,
  unassignKeysBody,
  updateGuardrailBody,
} from "@switchyard/contracts";
import { managementCallerOf, parseInput, updateBody } from "@switchyard/runtime";
import type { Request, RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import {
  assignKeys,
  createGuardrail,
  deleteGuardrail,
  getGuardrail,
  guardrailNotFound,
  listAssignments,
  listGuardrails,
  unassignKeys,
  updateGuardrail,
} from "../guardrails/service.js";

/** An id that is not a UUID identifies no guardrail: the same 404 as an unknown one, as the spec lists no 400. */
function guardrailIdOf(req: Request): string {
  const parsed = guardrailIdParams.safeParse(req.params);
  if (!parsed.success) throw guardrailNotFound();
  return parsed.data.id;
}

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
    const id = guardrailIdOf(req);
    res.json({ data: await getGuardrail(deps.db, caller.organizationId, id) });
  };

export const updateGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const id = guardrailIdOf(req);
    const body = parseInput(updateGuardrailBody, updateBody(req), "body");
    res.json({ data: await updateGuardrail(deps, caller.organizationId, id, body) });
  };

export const deleteGuardrailRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const id = guardrailIdOf(req);
    await deleteGuardrail(deps, caller.organizationId, id);
    res.json({ deleted: true });
  };

export const assignKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const id = guardrailIdOf(req);
    const { key_hashes } = parseInput(assignKeysBody, req.body, "body");
    res.json(await assignKeys(deps, caller.organizationId, id, key_hashes, caller.keyHash));
  };

export const unassignKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const id = guardrailIdOf(req);
    const { key_hashes } = parseInput(unassignKeysBody, req.body, "body");
    res.json(await unassignKeys(deps, caller.organizationId, id, key_hashes));
  };

export const listGuardrailKeysRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const id = guardrailIdOf(req);
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
