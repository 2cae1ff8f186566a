import type { IncomingMessage } from "node:http";

/**
 * What a forwarded request carries, as far as sending it again is concerned: nothing; a copy in memory,
 * which can be sent to a second replica; or a stream that can be read only once.
 */
export type RequestBody = { kind: "none" } | { kind: "buffered"; bytes: Buffer } | { kind: "stream" };

/**
 * Whether the body is kept in memory before it is forwarded. HTTP/1.1 requests without Content-Length or
 * Transfer-Encoding have no body. JSON bodies of known length up to `limit` (every JSON route's body in
 * practice: the router refuses larger than MAX_BODY_BYTES) are read first, so that a connection that fails
 * before the service answers can be tried again; the body arrives with its headers, so waiting for it
 * costs nothing the service would not wait for itself. Uploads (multipart, audio, files) and chunked bodies
 * stream through untouched: buffering them would cost the memory the router exists not to spend.
 */
export function bodyPlan(req: IncomingMessage, limit: number): "none" | "buffer" | "stream" {
  const chunked = req.headers["transfer-encoding"] !== undefined;
  const length = req.headers["content-length"];
  if (!chunked && (length === undefined || length === "0")) return "none";
  const json = (req.headers["content-type"] ?? "").toLowerCase().startsWith("application/json");
  return !chunked && json && Number(length) <= limit ? "buffer" : "stream";
}

/** The whole body, or undefined when the client went away before sending it. */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once("error", () => resolve(undefined));
    req.once("close", () => {
      if (!req.complete) resolve(undefined);
    });
  });
}
