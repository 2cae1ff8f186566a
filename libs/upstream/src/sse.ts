/** How long the rest of a body after `[DONE]` is read before its connection is given up. */
const drainAfterDoneMs = 1000;

/** The data of one event (its `data:` lines joined), or "" when it has none (comments, `event:` lines only). */
function dataOf(event: string): string {
  let data: string | undefined;
  for (const line of event.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data ?? "";
}

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
 */
export async function* sseData(body: AsyncIterable<Uint8Array>, isLast?: (data: string) => boolean): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body[Symbol.asyncIterator]();
  let buffer = "";
  let done = false;
  try {
    for (;;) {
      const next = await reader.next();
      if (next.done) return;
      const text = decoder.decode(next.value, { stream: true });
      // Lines may end in CR, LF or CRLF; one form makes events easy to find. A CR at the very end of a
      // read may be half of a CRLF, so it waits for the next read.
      buffer += text;
      if (buffer.includes("\r")) {
        const held = buffer.endsWith("\r") ? "\r" : "";
        buffer = buffer.slice(0, buffer.length - held.length).replace(/\r\n?/g, "\n") + held;
      }
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const data = dataOf(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
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
    }
  } finally {
    if (done) drain(reader);
    else await reader.return?.();
  }
}
