import { messagesCountTokensRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { estimateInputTokens, tokensPerAttachment } from "./count-tokens.js";

type Json = Record<string, unknown>;

const estimate = (body: Json) => estimateInputTokens(messagesCountTokensRequest.parse({ model: "claude-sonnet-4-5-20250929", ...body }));
const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(10_000) } };

describe("estimateInputTokens", () => {
  it("counts a token for every four characters, rounded up", () => {
    expect(estimate({ messages: [{ role: "user", content: "abcdefgh" }] })).toBe(2);
    expect(estimate({ messages: [{ role: "user", content: "abcdefghi" }] })).toBe(3);
    // The system prompt and the message are read as one text, a line apart: 3 + 1 + 8 characters.
    expect(estimate({ system: "abc", messages: [{ role: "user", content: "abcdefgh" }] })).toBe(3);
    expect(estimate({ messages: [{ role: "user", content: "" }] })).toBe(0);
  });

  it("reads the system prompt, the messages, tool inputs and results and the tool definitions; 1600 for each image or document", () => {
    expect(tokensPerAttachment).toBe(1600);
    const tools = [{ name: "lookup", description: "Find", input_schema: { type: "object" } }];
    const body = {
      system: [{ type: "text", text: "S".repeat(40), cache_control: { type: "ephemeral" } }],
      tools,
      messages: [
        { role: "user", content: [{ type: "text", text: "U".repeat(20) }, image, { type: "document", source: { type: "url", url: "https://a.example/x.pdf" }, title: "Title" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "T".repeat(12), signature: "X".repeat(500) },
            { type: "tool_use", id: `toolu_${"9".repeat(50)}`, name: "lookup", input: { query: "Q".repeat(8), limit: 3 } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${"9".repeat(50)}`, content: [{ type: "text", text: "R".repeat(30) }, image], is_error: false }] },
      ],
    };
    // Texts of 40, 20, 12, 6 ("lookup"), 8 and 30 characters and the 73 of the tools' JSON, six line breaks between them.
    expect(JSON.stringify(tools)).toHaveLength(73);
    expect(estimate(body)).toBe(Math.ceil((40 + 20 + 12 + 6 + 8 + 30 + 73 + 6) / 4) + 3 * 1600);
    expect(estimate(body)).toBe(4849);
  });

  it("does not count ids, signatures, cache markers or an image's data", () => {
    const turn = (id: string, signature: string, cached: boolean) => ({
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [{ type: "thinking", thinking: "Hmm", signature }, { type: "tool_use", id, name: "w", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "Sunny", ...(cached ? { cache_control: { type: "ephemeral", ttl: "1h" } } : {}) }] },
      ],
    });
    const small = estimate(turn("t", "s", false));
    // "Weather?", "Hmm", "w", "Sunny": 17 characters and three line breaks.
    expect(small).toBe(5);
    expect(estimate(turn(`toolu_${"x".repeat(400)}`, "S".repeat(4000), true))).toBe(small);
    expect(estimate({ messages: [{ role: "user", content: [image] }] })).toBe(1600);
    const redacted = { role: "assistant", content: [{ type: "redacted_thinking", data: "E".repeat(4000) }, { type: "text", text: "Hi" }] };
    expect(estimate({ messages: [{ role: "user", content: "Weather?" }, redacted] })).toBe(3);
    expect(estimate({ messages: [{ role: "user", content: [{ ...image, source: { ...image.source, data: "A".repeat(100) } }] }] })).toBe(1600);
  });
});
