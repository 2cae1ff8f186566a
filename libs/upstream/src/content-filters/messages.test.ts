import { describe, expect, it } from "vitest";
import { filterMessages, filterPrediction } from "./messages.js";
import { filterOptions } from "./options.js";
import { compileFilters } from "./scan.js";

const redacting = compileFilters([{ guardrailId: "g1", kind: "builtin", slug: "email", action: "redact", label: "[EMAIL]" }]);
const email = "ada@example.org";

describe("filterMessages", () => {
  it("redacts a server tool call sent back in reasoning_details, keeping its JSON", () => {
    const call = { type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: "c", arguments: JSON.stringify({ who: email }), result: `told ${email}` };
    const { value, findings } = filterMessages(redacting, [{ role: "assistant", content: "ok", reasoning_details: [call] }]);
    const [sent] = value[0]!.reasoning_details as Array<Record<string, string>>;
    expect(JSON.parse(sent!.arguments!)).toEqual({ who: "[EMAIL]" });
    expect(sent!.result).toBe("told [EMAIL]");
    expect(findings).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 2 })]);
  });

  it("turns a redact match in reasoning into a block, and leaves the reasoning as it was", () => {
    const messages = [{ role: "assistant", content: "ok", reasoning_details: [{ type: "reasoning.text", text: `about ${email}`, signature: "s" }] }];
    const { value, findings } = filterMessages(redacting, messages);
    expect(value[0]).toBe(messages[0]);
    expect(findings).toEqual([expect.objectContaining({ filter: "email", action: "block", count: 1 })]);
  });

  it("leaves reasoning unscanned when asked to, as the gateway's own loop does", () => {
    const { findings } = filterMessages(redacting, [{ role: "assistant", content: "ok", reasoning: `about ${email}` }], { skipReasoning: true });
    expect(findings).toEqual([]);
  });

  it("redacts refusals and file names, and returns untouched messages as they were", () => {
    const untouched = { role: "user", content: [{ type: "image_url", image_url: { url: "https://a.example/x.png" } }] };
    const { value } = filterMessages(redacting, [
      { role: "assistant", content: null, refusal: `not ${email}` },
      { role: "user", content: [{ type: "file", file: { filename: `for ${email}`, file_data: "data:application/pdf;base64,JVBE" } }] },
      untouched,
    ]);
    expect(value[0]!.refusal).toBe("not [EMAIL]");
    expect(value[1]!.content).toEqual([{ type: "file", file: { filename: "for [EMAIL]", file_data: "data:application/pdf;base64,JVBE" } }]);
    expect(value[2]).toBe(untouched);
  });
});

describe("filterPrediction and filterOptions", () => {
  it("redacts a predicted output given as a string or as text parts", () => {
    expect(filterPrediction(redacting, { type: "content", content: `to ${email}` }).value).toEqual({ type: "content", content: "to [EMAIL]" });
    expect(filterPrediction(redacting, { type: "content", content: [{ type: "text", text: email }] }).value).toEqual({ type: "content", content: [{ type: "text", text: "[EMAIL]" }] });
  });

  it("redacts string values at every depth, never keys, and keeps an untouched object as it was", () => {
    const options = { gem: { title: `doc ${email}`, nested: [{ note: email, n: 1 }] }, other: { keep: "plain" } };
    const { value, findings } = filterOptions(redacting, options);
    expect(value).toEqual({ gem: { title: "doc [EMAIL]", nested: [{ note: "[EMAIL]", n: 1 }] }, other: { keep: "plain" } });
    expect(value.other).toBe(options.other);
    expect(findings).toEqual([expect.objectContaining({ count: 2 })]);
    const plain = { a: { b: "c" } };
    expect(filterOptions(redacting, plain).value).toBe(plain);
  });
});
