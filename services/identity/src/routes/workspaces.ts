import { createWorkspaceBody, listWorkspacesQuery, updateWorkspaceBody, workspaceIdParams } from "@switchyard/contracts";
import { managementCallerOf, parseInput, updateBody } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { KeyDeps } from "../keys/service.js";
import { createWorkspace, deleteWorkspace, getWorkspace, listWorkspaces, updateWorkspace } from "../workspaces/service.js";

export const listWorkspacesRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listWorkspacesQuery, req.query, "query");
    res.json(await listWorkspaces(deps.db, caller.organizationId, query.offset ?? 0, query.limit ?? 50));
  };

export const createWorkspaceRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(createWorkspaceBody, req.body, "body");
    res.status(201).json({ data: await createWorkspace(deps, caller.organizationId, body, caller.keyHash) });
  };

export const getWorkspaceRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(workspaceIdParams, req.params, "path");
    res.json({ data: await getWorkspace(deps.db, caller.organizationId, id) });
  };

export const updateWorkspaceRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(workspaceIdParams, req.params, "path");
    const body = parseInput(updateWorkspaceBody, updateBody(req), "body");
    res.json({ data: await updateWorkspace(deps, caller.organizationId, id, body) });
  };

export const deleteWorkspaceRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(workspaceIdParams, req.params, "path");
    await deleteWorkspace(deps, caller.organizationId, id);
    res.json({ deleted: true });
  };
