import { createHash, randomBytes } from "node:crypto";

/** Ids are at most 40 characters; a restart suffix `-r` + 6 characters must still fit. */
const maxKey = 27;

/**
 * The sanitized form of a session key or generation id: letters, digits, `_` and `-` only, and a long key
 * cut short with a hash of the whole so different long keys stay different.
 */
export function sanitizeKey(key: string): string {
  const clean = key.replace(/[^A-Za-z0-9_-]/g, "_");
  if (clean.length <= maxKey) return clean;
  return `${clean.slice(0, maxKey - 9)}_${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
}

export const sessionBase = (key: string): string => `sess_${sanitizeKey(key)}`;
export const generationBase = (id: string): string => `gen_${sanitizeKey(id.replace(/^gen-/, ""))}`;

/** A restarted container: the base id with `-r` and a random nonce. */
export const restartedId = (base: string): string => `${base}-r${randomBytes(4).toString("base64url").slice(0, 6).replace(/[^A-Za-z0-9]/g, "0")}`;
