import { createHash } from "node:crypto";

/** The end-user id a provider is given: a per-workspace hash, so the caller's own id never leaves raw. */
export const endUser = (workspaceId: string, user: string): string => createHash("sha256").update(`${workspaceId}:${user}`).digest("hex").slice(0, 32);
