import { describe, expect, it } from "vitest";
import { attemptSignal, firstEventThenIdle } from "./attempt-timeouts.js";
import { UpstreamError } from "./errors.js";
import { sseData } from "./sse.js";

/** A body that hands out the given reads and remembers how it was left. */
function body(reads: string[]) {
  const state = { read: 0, returned: false };
  const encoder = new TextEncoder();
  const iterable: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => (state.read < reads.length ? { done: false, value: encoder.encode(reads[state.read++]) } : { done: true, value: undefined }),
      return: async () => {
        state.returned = true;
        return { done: true, value: undefined };
      },
    }),
  };
  return { iterable, state };
}

const all = async (source: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const data of source) out.push(data);
  return out;
};

describe("sseData", () => {
  it("reads events split anywhere across reads, in LF, CRLF and CR line endings", async () => {
    const { iterable } = body(["data: {\"a\":1}\n", "\ndata: two\r", "\n\r\ndata:three\r\rdata: fo", "ur\n\n"]);
    expect(await all(sseData(iterable))).toEqual(['{"a":1}', "two", "three", "four"]);
  });

  it("joins multi-line data and skips comments and events without data", async () => {
    const { iterable } = body([": OPENROUTER PROCESSING\n\nevent: ping\n\ndata: first\ndata: second\nid: 7\n\n"]);
    expect(await all(sseData(iterable))).toEqual(["first\nsecond"]);
  });

  it("ends at [DONE] and reads the rest of the body, so its connection can be reused", async () => {
    const { iterable, state } = body(["data: one\n\ndata: [DONE]\n\n", "data: after\n\n", ""]);
    expect(await all(sseData(iterable))).toEqual(["one"]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.read).toBe(3);
    expect(state.returned).toBe(false);
  });

  it("ends at the event the caller says is the last, and reads the rest of the body too", async () => {
    const { iterable, state } = body(['data: {"type":"ping"}\n\ndata: {"type":"message_stop"}\n\n', "data: after\n\n", ""]);
    expect(await all(sseData(iterable, (data) => data.includes('"message_stop"')))).toEqual(['{"type":"ping"}', '{"type":"message_stop"}']);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.read).toBe(3);
    expect(state.returned).toBe(false);
  });

  it("lets go of the body when its reader stops early", async () => {
    const { iterable, state } = body(["data: one\n\ndata: two\n\n", "data: three\n\n"]);
    for await (const data of sseData(iterable)) if (data === "one") break;
    expect(state.returned).toBe(true);
  });

  it("ends with the body when no [DONE] comes, dropping an unfinished event", async () => {
    const { iterable } = body(["data: one\n\ndata: cut"]);
    expect(await all(sseData(iterable))).toEqual(["one"]);
  });

  it("finds the blank line wherever reads split it", async () => {
    const { iterable } = body(["data: a", "\n", "\n", "data: b\r", "\n\r", "\n", "data: c\n\n\n", "data: d\n\n"]);
    expect(await all(sseData(iterable))).toEqual(["a", "b", "c", "d"]);
  });
});

describe("sseData on events of megabytes", () => {
  it("reads a 16 MiB event split into a thousand reads in time linear in its length", async () => {
    const size = 16 * 1024 * 1024;
    const text = `data: "${"A".repeat(size)}"\r\n\r\n`;
    const reads = Array.from({ length: Math.ceil(text.length / 16_384) }, (_, i) => text.slice(i * 16_384, (i + 1) * 16_384));
    const started = performance.now();
    const [data] = await all(sseData(body(reads).iterable));
    expect(data?.length).toBe(size + 2);
    // Linear parsing takes about 0.1 s here; rescanning the event at each read took 5 s and more.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("reads an event of exactly the limit, and fails the stream as the provider's on a longer one", async () => {
    const limit = 1000;
    const atLimit = `data: ${"x".repeat(limit - 6)}`;
    const { iterable, state } = body([`${atLimit}\n\n`, `data: ${"y".repeat(600)}`, `${"y".repeat(600)}`, "\n\ndata: after\n\n"]);
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const data of sseData(iterable, undefined, limit)) seen.push(data);
    })().catch((error: unknown) => error);
    expect(seen).toEqual(["x".repeat(limit - 6)]);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, retryable: false, message: expect.stringContaining("longer than 1000 characters") as string });
    // It failed while the event was still arriving, and let go of the body.
    expect(state.read).toBe(3);
    expect(state.returned).toBe(true);
  });

  it("refuses an event longer than the limit that arrives in one read", async () => {
    const { iterable } = body([`data: ${"z".repeat(2000)}\n\ndata: two\n\n`]);
    await expect(all(sseData(iterable, undefined, 1000))).rejects.toMatchObject({ status: 502, retryable: false });
  });

  it("makes an oversized first event a failure another endpoint may serve, as a broken stream is", async () => {
    const { iterable } = body([`data: ${"z".repeat(2000)}\n\n`]);
    const attempt = attemptSignal(new AbortController().signal);
    const failure = await firstEventThenIdle(sseData(iterable, undefined, 1000), attempt, "alpha", 10_000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, retryable: true });
  });
});
