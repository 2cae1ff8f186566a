import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sseWriter } from "./sse.js";

/** A socket's own write functions, which each send what they are given in one system call. */
interface SocketWrites {
  _write(chunk: unknown, ...rest: unknown[]): void;
  _writev(chunks: Array<{ chunk: unknown }>, ...rest: unknown[]): void;
}

let server: http.Server | undefined;

afterEach(async () => {
  const running = server;
  server = undefined;
  if (running) await new Promise((resolve) => running.close(resolve));
});

/** Serves one response with `handle`; resolves with the body the client got and each socket flush the server made, in order. */
async function serve(handle: (res: http.ServerResponse, flushes: string[]) => void) {
  const flushes: string[] = [];
  server = http.createServer((_req, res) => {
    // What reaches the socket's own write functions is what leaves in one system call.
    const socket = res.socket as unknown as SocketWrites;
    const write = socket._write.bind(socket);
    const writev = socket._writev.bind(socket);
    socket._write = (chunk, ...rest) => (flushes.push(String(chunk)), write(chunk, ...rest));
    socket._writev = (chunks, ...rest) => (flushes.push(chunks.map((c) => String(c.chunk)).join("")), writev(chunks, ...rest));
    handle(res, flushes);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { body: await answer.text(), headers: answer.headers, flushes };
}

describe("sseWriter", () => {
  it("sends the headers and the first event at once, and the events after it in the same tick in one write", async () => {
    let flushedWithFirst = -1;
    const { body, headers, flushes } = await serve((res, seen) => {
      const sse = sseWriter(res, { "x-generation-id": "gen-1" });
      sse.data({ n: 1 });
      flushedWithFirst = seen.length;
      sse.data({ n: 2 });
      sse.data({ n: 3 });
      sse.done();
      setImmediate(() => res.end());
    });
    expect(headers.get("content-type")).toBe("text/event-stream");
    expect(headers.get("x-generation-id")).toBe("gen-1");
    expect(body).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
    // The first event left before the second was written: it does not wait for the rest of the burst.
    expect(flushedWithFirst).toBe(1);
    expect(flushes[0]).toContain("HTTP/1.1 200");
    expect(flushes[0]).toContain('data: {"n":1}');
    expect(flushes[0]).not.toContain('"n":2');
    // The rest of the tick's events left together.
    expect(flushes[1]).toContain('data: {"n":2}');
    expect(flushes[1]).toContain("data: [DONE]");
  });

  it("reports a started stream only once something was sent", async () => {
    const started: boolean[] = [];
    await serve((res) => {
      const sse = sseWriter(res, {});
      started.push(sse.started);
      sse.comment("OPENROUTER PROCESSING");
      started.push(sse.started);
      res.end();
    });
    expect(started).toEqual([false, true]);
  });
});
