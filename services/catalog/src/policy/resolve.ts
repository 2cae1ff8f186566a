import { type Caller, notFound } from "@switchyard/runtime";
import type { Request } from "express";
import type { CatalogDeps } from "../deps.js";
import type { AccessPolicy } from "./access.js";

/** The hostname a request arrived on, as the client saw it (the router forwards it unchanged). */
export function requestHost(req: Request): string {
  const forwarded = req.headers["x-forwarded-host"];
  const host = (typeof forwarded === "string" ? forwarded.split(",")[0] : undefined) ?? req.headers.host ?? "";
  return host.trim().toLowerCase().replace(/:\d+$/, "");
}

/** Workspace preferences, the key's guardrails and the regional hostname, read fresh for this request. */
export async function accessPolicyFor(deps: CatalogDeps, caller: Caller, req: Request): Promise<AccessPolicy> {
  const [workspace, guardrails] = await Promise.all([deps.identity.workspacePolicy(caller.workspaceId), deps.guardrails.forKey(caller.keyHash)]);
  if (!workspace) throw notFound("Workspace not found");
  return { workspace, guardrails, region: deps.catalog.current().regionsByHost.get(requestHost(req)) };
}
