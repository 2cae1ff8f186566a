import { badRequest } from "@switchyard/runtime";

/** Opaque to callers: the position after which the next page starts. */
export const encodeCursor = (seq: string): string => Buffer.from(`files:${seq}`).toString("base64url");

/** Positions are a Postgres bigint: one past its largest would fail the query instead of the request. */
const largestPosition = 9_223_372_036_854_775_807n;

export function decodeCursor(cursor: string): string {
  const match = /^files:(\d{1,19})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || BigInt(match[1]!) > largestPosition) throw badRequest("Invalid query: cursor: not a cursor from a previous page");
  return match[1]!;
}
