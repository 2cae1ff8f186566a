import { callerOf, forbidden } from "@switchyard/runtime";
import type { Response } from "express";
import type { Owner } from "./records.js";

/**
 * Whose files a request reads: the key's own workspace, or with `workspace_id` another workspace of the
 * same organization, which only a management key may name.
 */
export function ownerOf(res: Response, workspaceId: string | undefined): Owner {
  const caller = callerOf(res);
  if (workspaceId !== undefined && workspaceId !== caller.workspaceId && !caller.management) {
    throw forbidden("Only management keys can reach another workspace's files");
  }
  return { organizationId: caller.organizationId, workspaceId: workspaceId ?? caller.workspaceId };
}
