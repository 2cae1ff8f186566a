import type { Response } from "express";

/**
 * Server-sent events to the client. Headers go out with the first write, so failures before it can still
 * be a plain HTTP error; after it, errors travel in-band.
 */
export function sseWriter(res: Response, headers: Record<string, string>) {
  const open = () => {
    if (res.headersSent) return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    res.flushHeaders();
  };
  return {
    /** A comment line clients ignore; keeps proxies from timing out while the provider thinks. */
    comment(text: string) {
      open();
      res.write(`: ${text}\n\n`);
    },
    data(value: unknown) {
      open();
      res.write(`data: ${JSON.stringify(value)}\n\n`);
    },
    done() {
      open();
      res.write("data: [DONE]\n\n");
    },
    get started() {
      return res.headersSent;
    },
  };
}
