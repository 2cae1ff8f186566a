import type { ServerResponse } from "node:http";

/**
 * Server-sent events to the client. Headers go out with the first write, so failures before it can still
 * be a plain HTTP error; after it, errors travel in-band.
 *
 * The headers and the first event leave at once: a provider sends its first chunks in a burst, and the
 * client's first token should not wait while the rest of the burst is relayed. Events written after it in
 * the same tick (the rest of one upstream read) leave in one socket write: each `write` of its own would
 * cost a system call and, on a busy gateway, most of a stream's CPU.
 */
export function sseWriter(res: ServerResponse, headers: Record<string, string>) {
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  const write = (text: string) => {
    if (!res.headersSent) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
      res.write(text);
      // Node corks a response's socket at its first write until the next tick; this one goes now.
      res.uncork();
      return;
    }
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    res.write(text);
  };
  return {
    /** A comment line clients ignore; keeps proxies from timing out while the provider thinks. */
    comment(text: string) {
      write(`: ${text}\n\n`);
    },
    data(value: unknown) {
      write(`data: ${JSON.stringify(value)}\n\n`);
    },
    done() {
      write("data: [DONE]\n\n");
    },
    get started() {
      return res.headersSent;
    },
  };
}
