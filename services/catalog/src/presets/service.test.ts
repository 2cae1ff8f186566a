import { describe, expect, it } from "vitest";
import { systemPromptFrom } from "./service.js";

const user = { role: "user", content: "hi" };

describe("systemPromptFrom", () => {
  it("takes system_prompt, else the first system or developer message", () => {
    expect(systemPromptFrom({ system_prompt: "Given.", messages: [{ role: "system", content: "No." }] })).toBe("Given.");
    expect(systemPromptFrom({ messages: [user, { role: "system", content: "Be brief." }] })).toBe("Be brief.");
    expect(systemPromptFrom({ messages: [{ role: "developer", content: "Be kind." }, user] })).toBe("Be kind.");
    expect(systemPromptFrom({ messages: [user] })).toBe("");
  });

  it("joins text parts", () => {
    const parts = [{ type: "text", text: "Be " }, { type: "text", text: "brief." }];
    expect(systemPromptFrom({ messages: [{ role: "system", content: parts }] })).toBe("Be brief.");
  });

  it("refuses other content with a 400 naming the field", () => {
    expect(() => systemPromptFrom({ messages: [user, { role: "system", content: 5 }] })).toThrow(/messages\.1\.content/);
    expect(() => systemPromptFrom({ messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "x" } }] }] })).toThrow(/messages\.0\.content/);
  });
});
