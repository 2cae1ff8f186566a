import { describe, expect, it } from "vitest";
import { compileFilters } from "./scan.js";
import { filterDeclarations } from "./tools.js";

const redacting = compileFilters([{ guardrailId: "g1", kind: "builtin", slug: "email", action: "redact", label: "[EMAIL]" }]);
const email = "ada@example.org";
const tool = (parameters: unknown) => ({ type: "function", function: { name: "f", description: "plain", parameters } });

describe("filterDeclarations", () => {
  it("walks nested schemas: combinators, items and definitions by name", () => {
    const parameters = {
      type: "object",
      $defs: { person: { type: "object", description: `like ${email}` } },
      properties: { to: { anyOf: [{ $ref: "#/$defs/person" }, { type: "array", items: { type: "string", description: `or ${email}` } }] } },
    };
    const { value, findings } = filterDeclarations(redacting, [tool(parameters)], undefined);
    const sent = (value.tools as Array<{ function: { parameters: unknown } }>)[0]!.function.parameters;
    expect(sent).toEqual({
      type: "object",
      $defs: { person: { type: "object", description: "like [EMAIL]" } },
      properties: { to: { anyOf: [{ $ref: "#/$defs/person" }, { type: "array", items: { type: "string", description: "or [EMAIL]" } }] } },
    });
    expect(findings).toEqual([expect.objectContaining({ action: "redact", count: 2 })]);
  });

  it("keeps the same values when nothing matched, and leaves names unscanned", () => {
    const tools = [tool({ type: "object", properties: { [email]: { type: "string" } } })];
    const format = { type: "json_schema", json_schema: { name: "n", schema: { type: "object" } } };
    const { value, findings } = filterDeclarations(redacting, tools, format);
    expect(value.tools).toBe(tools);
    expect(value.responseFormat).toBe(format);
    expect(findings).toEqual([]);
  });

  it("turns a redact match in another tool type's settings into a block", () => {
    const { value, findings } = filterDeclarations(redacting, [{ type: "openrouter:web_search", parameters: { note: email } }], undefined);
    expect((value.tools as unknown[])[0]).toEqual({ type: "openrouter:web_search", parameters: { note: email } });
    expect(findings).toEqual([expect.objectContaining({ action: "block", count: 1 })]);
  });

  it("scans a schema nested past its depth limit without walking it", () => {
    let deep: Record<string, unknown> = { description: email };
    for (let i = 0; i < 200; i++) deep = { items: deep };
    const { findings } = filterDeclarations(redacting, [tool(deep)], undefined);
    expect(findings).toEqual([expect.objectContaining({ action: "block", count: 1 })]);
  });

  it("redacts the descriptions of JSON mode's own schema (json_object with schema)", () => {
    const format = { type: "json_object", schema: { type: "object", properties: { to: { type: "string", description: `like ${email}` } } } };
    const { value, findings } = filterDeclarations(redacting, undefined, format);
    expect(value.responseFormat).toEqual({ type: "json_object", schema: { type: "object", properties: { to: { type: "string", description: "like [EMAIL]" } } } });
    expect(findings).toEqual([expect.objectContaining({ action: "redact", count: 1 })]);
  });
});
