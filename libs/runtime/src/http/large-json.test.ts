import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonBody, parseJsonBytes } from "./large-json.js";
import { seededRandom } from "../../../../tests/support/seeded.js";

/** The longest string a piece may be: 60 KB of characters, well under V8's 128 KB of a regular object even at two bytes each. */
const pieceLimit = 60 * 1024 + 64;

const words = ["fix", "the", "ledger", "test", '"quoted"', "back\\slash", "line\nbreak", "tab\t", "café", "🙂", "{\"role\":", "],", "\u0000", "日本語"];

function text(next: () => number, length: number): string {
  let out = "";
  while (out.length < length) out += `${words[Math.floor(next() * words.length)]} `;
  return out;
}

/** A conversation of `count` messages of about `size` characters each, in the shape chat clients send. */
function conversation(seed: number, count: number, size: number) {
  const next = seededRandom(seed);
  return Array.from({ length: count }, (_, i) =>
    i % 3 === 2
      ? { role: "assistant", content: [{ type: "text", text: text(next, size) }], tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "run", arguments: '{"cmd":"npm test"}' } }] }
      : { role: i % 3 === 0 ? "user" : "tool", content: text(next, size), ...(i % 3 === 1 ? { tool_call_id: `call_${i}` } : {}) },
  );
}

const bytesOf = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

/** Every string `JSON.parse` is given while `fn` runs, by length. */
function parsedLengths(fn: () => unknown): number[] {
  const parse = JSON.parse.bind(JSON);
  const lengths: number[] = [];
  const spy = vi.spyOn(JSON, "parse").mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    lengths.push(text.length);
    return parse(text, reviver) as unknown;
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return lengths;
}

afterEach(() => vi.restoreAllMocks());

describe("parseJsonBytes", () => {
  it("parses a large conversation in pieces, none of them a large string, to what JSON.parse makes", () => {
    for (const [count, size] of [[334, 700], [40, 9000], [3, 100_000]] as const) {
      const body = { model: "m", messages: conversation(count, count, size), stream: false, tools: [{ type: "function", function: { name: "run" } }] };
      const bytes = bytesOf(body);
      expect(bytes.length).toBeGreaterThan(200_000);
      let parsed: unknown;
      const copy = Buffer.from(bytes);
      const lengths = parsedLengths(() => (parsed = parseJsonBytes(bytes)));
      expect(parsed).toEqual(JSON.parse(bytes.toString("utf8")));
      expect(bytes.equals(copy)).toBe(true);
      // Messages of 100,000 characters are pieces of their own.
      if (size < pieceLimit) expect(Math.max(...lengths)).toBeLessThanOrEqual(pieceLimit);
      expect(lengths.length).toBeGreaterThan(2);
    }
  });

  it("parses the Responses API's input and Messages' messages wherever the member is, and Codex's items", () => {
    const input = conversation(7, 200, 1200);
    const next = seededRandom(5);
    const codex = Array.from({ length: 240 }, (_, i) => {
      const call_id = `call_${i >> 2}`;
      if (i % 4 === 0) return { type: "message", role: "user", content: [{ type: "input_text", text: text(next, 900) }] };
      if (i % 4 === 1) return { type: "reasoning", summary: [{ type: "summary_text", text: text(next, 300) }], encrypted_content: "gAAAA" };
      if (i % 4 === 2) return { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["rg", text(next, 40)] }), call_id };
      return { type: "function_call_output", call_id, output: text(next, 1500) };
    });
    const bodies = [
      { input, model: "m" },
      { model: "m", max_tokens: 100, system: "be brief", messages: input, metadata: { user_id: "u" } },
      { model: "gpt-5-codex", instructions: "You are Codex.", input: codex, tools: [{ type: "function", name: "shell" }], store: false, stream: true },
    ];
    for (const body of bodies) {
      const bytes = bytesOf(body);
      expect(bytes.length).toBeGreaterThan(200_000);
      const lengths = parsedLengths(() => expect(parseJsonBytes(bytes)).toEqual(body));
      expect(Math.max(...lengths)).toBeLessThanOrEqual(pieceLimit);
    }
  });

  it("gives JSON.parse's value where the parts could read the text otherwise", () => {
    const messages = conversation(3, 300, 800);
    const large = JSON.stringify(messages);
    const cases = [
      // A later member of the same name replaces the array.
      `{"model":"m","messages":${large},"messages":[{"role":"user","content":"only this"}]}`,
      `{"model":"m","messages":${large},"m\\u0065ssages":[{"role":"user","content":"only this"}]}`,
      // The array is not a top-level member.
      `{"model":"m","extra":{"messages":${large}}}`,
      `[${large}]`,
      // Items that start with another member, and objects with a role elsewhere.
      `{"model":"m","messages":${JSON.stringify(messages.map(({ role, ...rest }) => ({ ...rest, role })))}}`,
      `{"metadata":{"history":[{"role":"user"}]},"messages":${large}}`,
      `{"messages":${large},"metadata":{"history":[{"role":"user"}]}}`,
      `{"__proto__":${large}}`,
      // Items whose content holds what looks like the start of an item.
      `{"model":"m","input":${JSON.stringify(messages.map((m, i) => (i % 50 === 7 ? { type: "message", role: "user", content: [{ type: "message", text: "quoted" }, { role: "user" }] } : m)))}}`,
      // Whitespace between the items and around the commas.
      `{ "model" : "m" , "messages" : [ ${messages.map((m) => JSON.stringify(m)).join(" ,\n  ")} ] }`,
    ];
    for (const text of cases) {
      const bytes = Buffer.from(text, "utf8");
      expect(bytes.length).toBeGreaterThan(200_000);
      const value = parseJsonBytes(bytes) as Record<string, unknown>;
      expect(value).toEqual(JSON.parse(text));
      expect(Object.getPrototypeOf(value)).toBe(Object.getPrototypeOf(JSON.parse(text)));
    }
  });

  it("reads the text after the last item once, unless it may name the array's member again", () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `step ${i}: ${"run the tests and fix what fails. ".repeat(30)}` }));
    const tools = Array.from({ length: 120 }, (_, i) => ({ name: `tool_${i}`, description: "Runs a command in the repository. ".repeat(25), input_schema: { type: "object" } }));
    const readsOfTail = (body: unknown) => {
      const bytes = bytesOf(body);
      const lengths = parsedLengths(() => expect(parseJsonBytes(bytes)).toEqual(body));
      return lengths.filter((length) => length > 90_000).length;
    };
    expect(readsOfTail({ model: "m", messages, system: "Be brief — and exact.", tools })).toBe(1);
    // A control character is written as a \u escape, which could spell the member's name too.
    expect(readsOfTail({ model: "m", messages, system: "Be brief.\u0007", tools })).toBe(2);
    expect(readsOfTail({ model: "m", messages, system: "Be brief.", tools, metadata: { messages: 1 } })).toBe(2);
  });

  it("throws JSON.parse's error for text that is not JSON", () => {
    const messages = JSON.stringify(conversation(5, 300, 800));
    const broken = [
      `{"model":"m","messages":${messages.replace('},{"role"', '},,{"role"')}}`,
      `{"model":"m","messages":${messages.replace('},{"role"', '}{"role"')}}`,
      `{"model":"m","messages":${messages.slice(0, -1)}`,
      `{"model":"m","messages":${messages}]}`,
      `{"model":"m,"messages":${messages}}`,
    ];
    for (const text of broken) {
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
      expect(() => parseJsonBytes(Buffer.from(text, "utf8"))).toThrow(SyntaxError);
    }
  });

  it("parses small text whole", () => {
    expect(parseJsonBytes(Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}]}'))).toEqual({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(parseJsonBytes(Buffer.from("[1,2]"))).toEqual([1, 2]);
  });
});

/** Every string measured for its bytes while `fn` runs (each piece `jsonBody` writes), by length. */
function writtenLengths(fn: () => unknown): number[] {
  const byteLength = Buffer.byteLength.bind(Buffer);
  const lengths: number[] = [];
  const spy = vi.spyOn(Buffer, "byteLength").mockImplementation((...args: Parameters<typeof Buffer.byteLength>) => {
    if (typeof args[0] === "string") lengths.push(args[0].length);
    return byteLength(...args);
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return lengths;
}

/** The length of the JSON of the longest string in a value. */
function longestString(value: unknown): number {
  if (typeof value === "string") return JSON.stringify(value).length;
  if (typeof value !== "object" || value === null) return 0;
  return Math.max(0, ...Object.values(value).map(longestString));
}

describe("jsonBody", () => {
  it("writes a large body as JSON.stringify's bytes, from pieces that are none of them large", () => {
    const next = seededRandom(11);
    const bodies = [
      { model: "m", messages: conversation(1, 334, 700), stream: false, skipped: undefined, fn: () => 1 },
      { contents: conversation(2, 4, 90_000).map((m) => ({ role: m.role, parts: [{ text: m.content }] })), generationConfig: { temperature: 0.2 } },
      { input: Array.from({ length: 2048 }, () => text(next, 120)), model: "embed" },
      { model: "m", messages: [{ role: "user", content: [{ type: "text", text: text(next, 70_000) }, { type: "text", text: text(next, 70_000) }, undefined, null] }] },
      Array.from({ length: 500 }, (_, i) => ({ i, when: new Date(i * 1e9), nested: [i, [i, { deep: text(next, 300) }]], gone: undefined, boxed: new String(text(next, 100)) })),
      { boxed: new String(text(next, 50_000)), plain: Object.assign(Object.create(null) as object, { text: text(next, 50_000) }), list: [new Number(1), () => 2, Symbol("s")] },
    ];
    for (const body of bodies) {
      let written: unknown;
      const lengths = writtenLengths(() => (written = jsonBody(body)));
      expect(Buffer.isBuffer(written) && written.equals(bytesOf(body))).toBe(true);
      // A string too long for a piece is one of its own, with its member's name; everything else stays under the limit.
      expect(Math.max(...lengths)).toBeLessThanOrEqual(Math.max(pieceLimit, longestString(body) + 16));
    }
  });

  it("gives small bodies and other values as JSON.stringify's string", () => {
    for (const value of [{ model: "m", messages: [{ role: "user", content: "hi" }] }, [1, "two", null], "text", 3, null, new Date(0)]) {
      expect(jsonBody(value)).toBe(JSON.stringify(value));
    }
  });
});
