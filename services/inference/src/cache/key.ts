import { createHash } from "node:crypto";

/** Fields of a client's body that change how an answer travels, not what it says. */
const transportOnly = new Set(["stream", "stream_options"]);

/** JSON with object keys sorted at every depth: two bodies that differ only in key order are one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What makes two requests the same request for the response cache. */
export interface CacheKeyInput {
  workspaceId: string;
  /** The endpoint asked (`chat`, `responses`, `messages`, `completions`): each answers in its own shape. */
  dialect: string;
  /** Streamed and buffered answers are kept apart, as OpenRouter keeps them. */
  stream: boolean;
  /** The body as the client sent it. */
  client: unknown;
  /** The body providers get: presets applied, guardrails' redactions made. */
  sent: Readonly<Record<string, unknown>>;
}

/**
 * The cache key: SHA-256 of the canonical JSON of the workspace, the endpoint, the streaming mode, the client's
 * body (without `stream` and `stream_options`) and the body providers would get. The last catches what changes
 * an answer without changing the client's words: a preset's new version, a guardrail's new redaction.
 */
export function cacheKey(input: CacheKeyInput): string {
  const client =
    input.client !== null && typeof input.client === "object" && !Array.isArray(input.client)
      ? Object.fromEntries(Object.entries(input.client as Record<string, unknown>).filter(([k]) => !transportOnly.has(k)))
      : input.client;
  const text = canonicalJson({ v: 1, workspace: input.workspaceId, dialect: input.dialect, stream: input.stream, client, sent: input.sent });
  return createHash("sha256").update(text).digest("hex");
}
