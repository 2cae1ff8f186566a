import { messagesRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { toChatRequest } from "./request.js";

type Json = Record<string, unknown>;

/** The chat messages a Messages request maps to. */
const messagesOf = (body: Json) => toChatRequest(messagesRequest.parse({ model: "claude-sonnet-4-5-20250929", max_tokens: 1024, ...body })).chat.messages as Json[];

describe("toChatRequest: reasoning sent back", () => {
  it("gives another provider's signed and encrypted reasoning back as that provider's own entries", () => {
    const content = [
      { type: "thinking", thinking: "Gem", signature: "switchyard:google-gemini-v1:call_1:g-sig" },
      { type: "redacted_thinking", data: "switchyard:openai-responses-v1:rs_1:gAAAA" },
      { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
    ];
    expect(messagesOf({ messages: [{ role: "user", content: "Weather?" }, { role: "assistant", content }] })[1]).toMatchObject({
      reasoning_details: [
        { type: "reasoning.text", text: "Gem", signature: "g-sig", format: "google-gemini-v1", own_provider_only: true, id: "call_1" },
        { type: "reasoning.encrypted", data: "gAAAA", format: "openai-responses-v1", own_provider_only: true, id: "rs_1" },
      ],
    });
  });

  it("gives thinking without a signature as reasoning text of no provider, and a format the gateway has no adapter for unbound", () => {
    const content = [
      { type: "thinking", thinking: "Plain thought.", signature: "" },
      { type: "redacted_thinking", data: "switchyard:other-vendor-v1::opaque" },
      { type: "text", text: "Done." },
    ];
    expect(messagesOf({ messages: [{ role: "user", content: "Hi" }, { role: "assistant", content }] })[1]!.reasoning_details).toEqual([
      { type: "reasoning.text", text: "Plain thought." },
      { type: "reasoning.encrypted", data: "opaque", format: "other-vendor-v1" },
    ]);
  });
});
