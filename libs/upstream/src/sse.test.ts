import { describe, expect, it } from "vitest";
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
});
