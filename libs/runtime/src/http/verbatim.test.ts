import { describe, expect, it } from "vitest";
import { jsonBody, parseJsonBytes } from "./large-json.js";
import { madeFrom } from "./verbatim.js";

type Message = { role: string; content: unknown };

/** About 150 KB of conversation written with a space after every comma and colon, as Python's `json.dumps` writes it. */
function spacedBody(extra = "") {
  const messages: Message[] = Array.from({ length: 300 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: i % 3 ? `step ${i}: ${"fix the ledger test, café ".repeat(25)}${extra}` : [{ type: "text", text: `step ${i} 🙂` }],
  }));
  const spaced = (value: unknown): string =>
    Array.isArray(value)
      ? `[${value.map(spaced).join(", ")}]`
      : value !== null && typeof value === "object"
        ? `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(", ")}}`
        : JSON.stringify(value);
  const text = spaced({ model: "m", messages, stream: false });
  return { messages, text, bytes: Buffer.from(text, "utf8"), spaced };
}

const written = (value: unknown) => {
  const body = jsonBody(value);
  return typeof body === "string" ? body : body.toString("utf8");
};

describe("verbatim items", () => {
  it("writes items still as parsed from the client's bytes, also after the caller reused them", () => {
    const { messages, text, bytes, spaced } = spacedBody();
    const value = parseJsonBytes(bytes) as { messages: Message[] };
    bytes.fill(0x20);
    const out = written({ ...value, model: "upstream" });
    expect(JSON.parse(out)).toEqual({ model: "upstream", messages, stream: false });
    // All but the last item (read with the text after it) as the client wrote them.
    expect(messages.slice(0, -1).every((m) => out.includes(spaced(m)))).toBe(true);
    expect(out.length).toBeLessThan(text.length);
  });

  it("writes a declared copy from the text where its items are equal, and changed items as they are now", () => {
    const { messages, bytes, spaced } = spacedBody();
    const value = parseJsonBytes(bytes) as { messages: Message[] };
    // A schema's output: new objects, members JSON leaves out included.
    const copy: Message[] = value.messages.map((m) => ({ ...m, name: undefined }));
    copy[5] = { role: "user", content: "[REDACTED]" };
    madeFrom(copy, value.messages);
    const out = written({ messages: copy });
    expect(JSON.parse(out)).toEqual({ messages: [...messages.slice(0, 5), { role: "user", content: "[REDACTED]" }, ...messages.slice(6)] });
    expect(out).not.toContain(spaced(messages[5]));
    expect(out).toContain(spaced(messages[200]));
  });

  it("writes an array whose items moved or grew as it is now", () => {
    const { messages, bytes, spaced } = spacedBody();
    const value = parseJsonBytes(bytes) as { messages: Message[] };
    value.messages.push({ role: "user", content: "one more" });
    expect(JSON.parse(written(value))).toEqual({ model: "m", messages: [...messages, { role: "user", content: "one more" }], stream: false });
    // A frozen copy cannot carry the source; it is written as it is.
    const frozen = Object.freeze([...value.messages]);
    madeFrom(frozen, value.messages);
    expect(JSON.parse(written({ messages: frozen }))).toEqual({ messages: [...messages, { role: "user", content: "one more" }] });
    const reversed = [...value.messages].reverse();
    madeFrom(reversed, value.messages);
    const out = written({ messages: reversed });
    expect(JSON.parse(out)).toEqual({ messages: reversed });
    expect(out).not.toContain(spaced(messages[10]));
  });

  it("writes items as parsed once the memory their text was kept in has been reused", () => {
    const { messages, bytes, spaced } = spacedBody();
    const value = parseJsonBytes(bytes) as { messages: Message[] };
    // 6 MB of other conversations' text (about 150 KB each).
    for (let i = 0; i < 40; i++) parseJsonBytes(spacedBody(`run ${i}`).bytes);
    const out = written(value);
    expect(JSON.parse(out)).toEqual({ model: "m", messages, stream: false });
    expect(out).not.toContain(spaced(messages[0]));
    expect(out).not.toContain("run ");
  });

  it("freezes the items it keeps the text of, nested values included", () => {
    const value = parseJsonBytes(spacedBody().bytes) as { messages: Message[] };
    const [first, second] = value.messages as [{ content: Array<{ text: string }> }, Message];
    expect(() => (second.content = "changed")).toThrow(TypeError);
    expect(() => (first.content[0]!.text = "changed")).toThrow(TypeError);
  });

  it("writes text that is not UTF-8 with the replacement character, as parsed", () => {
    const { bytes } = spacedBody();
    const broken = Buffer.from(bytes);
    broken[broken.indexOf("café") + 3] = 0xff;
    const parsed = JSON.parse(broken.toString("utf8")) as unknown;
    const body = jsonBody(parseJsonBytes(broken));
    expect(Buffer.isBuffer(body) && !body.includes(0xff)).toBe(true);
    expect(JSON.parse(body.toString())).toEqual(parsed);
  });

  it("writes a group whose text names a member twice, or writes a quote as \\u0022, from its items", () => {
    const { messages, text, spaced } = spacedBody();
    const twice = text.replace('{"role": "assistant", "content": "step 1:', '{"role": "assistant", "content": "mail ada@example.org", "content": "step 1:');
    // The second member's four quotes, balanced by four written as escapes.
    const balanced = twice.replace("step 1:", "step \\u0022\\u0022\\u0022\\u0022 1:");
    for (const [body, changed] of [[twice, 1], [balanced, 1]] as const) {
      const parsed = JSON.parse(body) as { messages: Message[] };
      const out = written(parseJsonBytes(Buffer.from(body)));
      expect(JSON.parse(out)).toEqual(parsed);
      expect(out).not.toContain("ada@example.org");
      expect(out).not.toContain(spaced(messages[0]));
      expect(out).not.toContain(spaced(parsed.messages[changed]));
      // Groups further on are still written from their text.
      expect(out).toContain(spaced(messages[250]));
    }
  });
});
