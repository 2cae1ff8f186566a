import type { ServerResponse } from "node:http";

/**
 * Server-sent events to the client. Headers go out with the first write, so failures before it can still
 * be a plain HTTP error; after it, errors travel in-band.
 *
 * Node corks a response's socket at each write until the next tick, so the events written in one tick (the
 * rest of one upstream read) leave in one socket write: each `write` of its own would cost a system call
 * and, on a busy gateway, most of a stream's CPU. The headers and the first event are uncorked at once: a
 * provider sends its first chunks in a burst, and the client's first token should not wait while the rest
 * of the burst is relayed. That uncork is the socket's, balancing the cork Node's first write put on it: the
 * response's own `uncork` would, on Node 22 and later, count the response as corked once less than never,
 * hold every later event in its chunk buffer and write them after the stream's last chunk, so clients would
 * get the first event and a connection they can no longer read.
 */
export function sseWriter(res: ServerResponse, headers: Record<string, string>) {
  const write = (text: string) => {
    if (res.headersSent) return void res.write(text);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    res.write(text);
    res.socket?.uncork();
  };
  return {
    /** A comment line clients ignore; keeps proxies from timing out while the provider thinks. */
    comment(text: string) {
      write(`: ${text}\n\n`);
    },
    data(value: unknown) {
      write(`data: ${JSON.stringify(value)}\n\n`);
    },
    /** A named event, as the Responses API streams them. */
    event(name: string, value: unknown) {
      write(`event: ${name}\ndata: ${JSON.stringify(value)}\n\n`);
    },
    done() {
      write("data: [DONE]\n\n");
    },
    get started() {
      return res.headersSent;
    },
    /**
     * Once the client has not taken what was written (its socket's buffer is past its high-water mark), the
     * moment it has, or has gone; undefined while it keeps up. Writes never wait themselves: the relay waits
     * here between a provider's events, so that it reads from the provider only as fast as the client reads.
     */
    drained(): Promise<void> | undefined {
      if (!res.writableNeedDrain || res.destroyed) return undefined;
      return new Promise((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    },
  };
}

const keepAliveMs = 2000;

/** `: OPENROUTER PROCESSING` comments while nothing else is sent: a provider thinking, a tool running. */
export function keepAlive(sse: ReturnType<typeof sseWriter>) {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      timer ??= setInterval(() => sse.comment("OPENROUTER PROCESSING"), keepAliveMs);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * What every dialect's stream shares: its writer (headers carry the generation id), the keep-alive
 * comments, and whether a byte reached the client yet.
 */
export abstract class SseStream {
  protected readonly sse;
  private readonly alive;
  protected readonly created = Math.floor(Date.now() / 1000);

  constructor(res: ServerResponse, generationId: string) {
    this.sse = sseWriter(res, { "x-generation-id": generationId });
    this.alive = keepAlive(this.sse);
  }

  get started(): boolean {
    return this.sse.started;
  }

  /** See `sseWriter`'s `drained`. */
  drained(): Promise<void> | undefined {
    return this.sse.drained();
  }

  keepAlive(on: boolean): void {
    if (on) this.alive.start();
    else this.alive.stop();
  }
}
