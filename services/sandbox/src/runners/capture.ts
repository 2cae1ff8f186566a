import type { Readable } from "node:stream";

/** Keeps the first `limit` bytes of a stream and counts the rest, which it reads and drops. */
export function capture(stream: Readable, limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  stream.on("data", (chunk: Buffer) => {
    const room = limit - kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    }
    dropped += Math.max(0, chunk.length - Math.max(room, 0));
  });
  return {
    /** The kept output as text; a character cut in half at the limit is dropped. */
    text: () => Buffer.concat(chunks).toString("utf8").replace(/\uFFFD$/, ""),
    truncated: () => dropped > 0,
  };
}
