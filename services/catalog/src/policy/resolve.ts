import { type Caller, notFound, requestHost } from "@switchyard/runtime";
import type { Request } from "express";
import type { CatalogDeps } from "../deps.js";
import type { AccessPolicy } from "./access.js";

/** Workspace preferences, the key's guardrails and the regional hostname, read fresh for this request. */
export async function accessPolicyFor(deps: CatalogDeps, caller: Caller, req: Request): Promise<AccessPolicy> {
  const [workspace, guardrails] = await Promise.all([deps.identity.workspacePolicy(caller.workspaceId), deps.guardrails.forKey(caller.keyHash)]);
  if (!workspace) throw notFound("Workspace not found");
  return { workspace, guardrails, region: deps.catalog.current().regionsByHost.get(requestHost(req.headers)) };
}
