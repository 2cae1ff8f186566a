import { callerOf, forbidden, notFound } from "@switchyard/runtime";
import type { Response } from "express";
import type { StorageDeps } from "../deps.js";
import type { Owner } from "./records.js";

/**
 * Whose files a request reads: the key's own workspace, or with `workspace_id` another workspace of the
 * same organization, which only a management key may name. A workspace of another organization is a 404,
 * as identity answers for it, before its files or its provider keys are looked at.
 */
export async function ownerOf(deps: Pick<StorageDeps, "workspaceInOrganization">, res: Response, workspaceId: string | undefined): Promise<Owner> {
  const caller = callerOf(res);
  const own = { organizationId: caller.organizationId, workspaceId: caller.workspaceId };
  if (workspaceId === undefined || workspaceId === caller.workspaceId) return own;
  if (!caller.management) throw forbidden("Only management keys can reach another workspace's files");
  if (!(await deps.workspaceInOrganization(workspaceId, caller.organizationId))) throw notFound("Workspace not found");
  return { ...own, workspaceId };
}
