import { UpstreamError } from "./errors.js";

/** How long the rest of a body after `[DONE]` is read before its connection is given up. */
const drainAfterDoneMs = 1000;

/**
 * Longest event read, in characters (bytes, for the ASCII that JSON events are): 128 MiB. The largest events
 * providers send carry a whole image in base64, repeated in a Responses stream's `response.completed`; a
 * 4096×4096 PNG of noise, the worst of them, is about 85 MiB so. A longer event fails the stream as the
 * provider's error instead of growing one string toward V8's limit.
 */
export const maxSseEventLength = 128 * 1024 * 1024;

/** The data of one event (its `data:` lines joined), or "" when it has none (comments, `event:` lines only). */
function dataOf(event: string): string {
  const data: string[] = [];
  for (const line of event.split("\n")) {
    if (!line.startsWith("data:")) continue;
    data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
  }
  return data.join("\n");
}

const tooLong = (limit: number) => new UpstreamError(`The provider sent a stream event longer than ${limit} characters, the gateway's limit for one event`, 502, false);

/**
 * Reads what follows `[DONE]` (usually nothing but the body's end) in the background: a body read to its
 * end leaves its keep-alive connection to the next request, where one abandoned early would be torn down.
 */
function drain(body: AsyncIterator<Uint8Array>) {
  const timer = setTimeout(() => void body.return?.(), drainAfterDoneMs);
  void (async () => {
    try {
      while (!(await body.next()).done);
    } catch {
      // The body failed after its last event: nothing is lost.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/**
 * Server-sent events: `data:` lines grouped into events, until `[DONE]`, the event `isLast` says ends the
 * stream (Anthropic's `message_stop`), or the end of the body. What follows the last event is drained.
 *
 * Each read is looked at once: the text of an unfinished event waits in pieces, joined when its blank line
 * comes, so an event split over thousands of reads costs its length, not its length times the reads. An
 * event longer than `maxEventLength` characters fails the stream with an `UpstreamError` (a 502 the attempt
 * reports as the provider's failure, as it does a chunk that does not parse).
 */
export async function* sseData(body: AsyncIterable<Uint8Array>, isLast?: (data: string) => boolean, maxEventLength = maxSseEventLength): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body[Symbol.asyncIterator]();
  // The unfinished event: its pieces, their length, and whether its text ends in a line feed.
  let pieces: string[] = [];
  let pending = 0;
  let endsInLine = false;
  // A CR at the very end of a read may be half of a CRLF, so it waits for the next read.
  let heldCr = false;
  let done = false;
  try {
    for (;;) {
      const next = await reader.next();
      if (next.done) return;
      let text = decoder.decode(next.value, { stream: true });
      if (heldCr) text = `\r${text}`;
      heldCr = text.endsWith("\r");
      if (heldCr) text = text.slice(0, -1);
      // Lines may end in CR, LF or CRLF; one form makes events easy to find.
      if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
      let from = 0;
      for (;;) {
        let event: string;
        if (from === 0 && endsInLine && text.startsWith("\n")) {
          // The event's text ended a line and this read begins with the blank line after it.
          event = pieces.join("").slice(0, -1);
          from = 1;
        } else {
          const cut = text.indexOf("\n\n", from);
          if (cut < 0) break;
          event = pieces.join("") + text.slice(from, cut);
          from = cut + 2;
        }
        pieces = [];
        pending = 0;
        endsInLine = false;
        if (event.length > maxEventLength) throw tooLong(maxEventLength);
        const data = dataOf(event);
        if (!data) continue;
        if (data === "[DONE]") {
          done = true;
          return;
        }
        yield data;
        if (isLast?.(data)) {
          done = true;
          return;
        }
      }
      const rest = from === 0 ? text : text.slice(from);
      if (rest) {
        pieces.push(rest);
        pending += rest.length;
        endsInLine = rest.endsWith("\n");
        if (pending > maxEventLength) throw tooLong(maxEventLength);
      }
    }
  } finally {
    if (done) drain(reader);
    else await reader.return?.();
  }
}
