import { isAscii } from "node:buffer";
import { joinedBytes } from "@switchyard/runtime";
import { parsedText, postJsonChunks } from "@switchyard/upstream";
import type { UpstreamTarget } from "../types.js";
import { bearer, endpointUrl } from "./wire.js";

/** An embeddings answer as JSON, and whether its text was plain: ASCII without a backslash. */
export interface EmbeddingsReply {
  json: unknown;
  /** Strings of a plain answer hold no quote, backslash or non-ASCII byte, so they go into the client's JSON as they are. */
  plain: boolean;
}

const marker = Buffer.from('"embedding":"', "latin1");
const quote = 0x22;
const backslash = 0x5c;

/**
 * Puts each vector back where its stand-in is: a string of a NUL and the vector's ordinal, which no string
 * of a plain answer can hold (a NUL must be written as an escape, and plain text has no backslash).
 */
function putBack(value: unknown, vectors: readonly string[]): void {
  if (typeof value !== "object" || value === null) return;
  const entries = value as Record<string, unknown>;
  for (const key in entries) {
    const inner = entries[key];
    if (typeof inner === "string") {
      if (inner.charCodeAt(0) === 0) entries[key] = vectors[Number(inner.slice(1))];
    } else putBack(inner, vectors);
  }
}

/**
 * Reads an OpenAI-style embeddings answer, as the chunks it came in. A plain answer's (ASCII without a
 * backslash) `"embedding":"…"` strings are cut out as they are, each read as Latin-1 (a copy, where UTF-8
 * decoding is a scan), and only the rest is parsed: in text without a backslash every quote delimits a
 * string, so that marker can only open an `embedding` key with a string value, which ends at the next quote.
 * Each cut leaves a stand-in, and the vectors go back in their places after the parse. The bytes are read
 * where `joinedBytes` joined them, never in a buffer of their own. The vectors are not checked here: the
 * adapter's `vector` schema refuses all but base64, which also stands for the valid JSON the cut parts
 * must have been. A 16 × 1,536-dimension answer is ~130 KB; decoding and parsing it whole cost more than the
 * rest of the request. Undefined chunks (a dropped connection) and text that is not JSON read as no JSON.
 */
export function readEmbeddingsReply(chunks: readonly Buffer[] | undefined): EmbeddingsReply {
  if (chunks === undefined) return { json: undefined, plain: false };
  const bytes = joinedBytes(chunks);
  if (!isAscii(bytes) || bytes.includes(backslash)) return { json: parsedText(bytes.toString("utf8")), plain: false };
  const vectors: string[] = [];
  let rest = "";
  let from = 0;
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, from)) {
    const start = at + marker.length;
    const end = bytes.indexOf(quote, start);
    if (end === -1) return { json: undefined, plain: true };
    rest += `${bytes.toString("latin1", from, start)}\\u0000${vectors.length}`;
    vectors.push(bytes.toString("latin1", start, end));
    from = end;
  }
  const json = parsedText(rest + bytes.toString("latin1", from));
  if (json !== undefined) putBack(json, vectors);
  return { json, plain: true };
}

/** `POST {base}/embeddings` with a JSON body, its answer read by `readEmbeddingsReply`. */
export const postEmbeddings = async (target: UpstreamTarget, body: Record<string, unknown>, signal: AbortSignal): Promise<EmbeddingsReply> =>
  readEmbeddingsReply(await postJsonChunks(target.provider, endpointUrl(target, "/embeddings"), bearer(target), body, signal));
