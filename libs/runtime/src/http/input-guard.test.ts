import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeZodError, HttpError, parseInput } from "./index.js";
import { deepestPath, inputProblem, maxInputDepth, textProblem } from "./input-guard.js";

/** Objects `depth` levels deep. */
const nested = (depth: number): unknown => {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe("inputProblem", () => {
  it("allows nesting up to the limit and names the field past it", () => {
    expect(inputProblem(nested(maxInputDepth), "body")).toBeUndefined();
    expect(inputProblem(nested(maxInputDepth + 1), "body")).toMatch(/^a(\.a)*…: nested deeper than 64 levels$/);
    expect(inputProblem([nested(maxInputDepth - 1)], "body")).toBeUndefined();
    expect(inputProblem([[nested(maxInputDepth - 1)]], "body")).toMatch(/^0\.0(\.a)*…?: nested deeper than 64 levels$/);
    expect(inputProblem({ list: [[[]]] }, "body")).toBeUndefined();
  });

  it("names a text field, an array item and a field name carrying NUL", () => {
    expect(inputProblem({ name: "a\u0000b" }, "body")).toBe("name: must not contain NUL (U+0000) characters");
    expect(inputProblem({ tags: ["ok", "b\u0000"] }, "body")).toBe("tags.1: must not contain NUL (U+0000) characters");
    expect(inputProblem({ meta: { ["k\u0000"]: 1 } }, "body")).toBe("meta: field names must not contain NUL (U+0000) characters");
    expect(inputProblem("x\u0000", "body.file filename")).toBe("body.file filename: must not contain NUL (U+0000) characters");
    expect(inputProblem({ name: "plain text, even \u0001 or \uffff" }, "body")).toBeUndefined();
  });
});

describe("textProblem", () => {
  /** The same value as text and as UTF-8 bytes: both must be told alike, and as `inputProblem` tells the parsed value. */
  const forms = (value: unknown): Array<string | Buffer> => [JSON.stringify(value), Buffer.from(JSON.stringify(value))];

  it("names the first level too deep as inputProblem does, from the text alone", () => {
    const values = [
      nested(maxInputDepth),
      nested(maxInputDepth + 1),
      { tools: nested(200), name: "x" },
      [1, [2, 3, [nested(maxInputDepth)]]],
      { "k\"ey ü": [[0, 1, { "é\\": nested(maxInputDepth) }]] },
      { list: [[[]]], text: "}}]]{{[[" },
    ];
    for (const value of values) {
      for (const text of forms(value)) expect(textProblem(text, "body")).toBe(inputProblem(value, "body"));
    }
  });

  it("reads brackets inside strings as text, escaped quotes and backslashes included", () => {
    const brackets = "[".repeat(500);
    for (const text of [JSON.stringify({ a: brackets }), JSON.stringify(["\\", `"${brackets}`, `\\"${brackets}`]), JSON.stringify({ [brackets]: 1 })]) {
      expect(deepestPath(text)).toBeUndefined();
      expect(deepestPath(Buffer.from(text))).toBeUndefined();
    }
    // A quote after an even run of backslashes closes its string, so the brackets after it count.
    const evenRun = `${JSON.stringify(["\\\\"]).slice(0, -1)},${"[".repeat(100)}`;
    expect(evenRun.startsWith('["\\\\\\\\",[')).toBe(true);
    expect(deepestPath(evenRun)).toHaveLength(maxInputDepth);
    expect(deepestPath(Buffer.from(evenRun))).toHaveLength(maxInputDepth);
    // A long string dense with escaped quotes (JSON text inside JSON) is skipped whole.
    const inner = JSON.stringify(JSON.stringify(nested(30)).repeat(200));
    expect(deepestPath(Buffer.from(`[${inner},${inner}]`))).toBeUndefined();
  });

  it("stops at the first level too deep, a million levels or not", () => {
    const text = `{"m":${'{"a":'.repeat(1_000_000)}1${"}".repeat(1_000_001)}`;
    const started = performance.now();
    expect(textProblem(Buffer.from(text), "body")).toMatch(/^m(\.a)+\.?…: nested deeper than 64 levels$/);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it("leaves text that is not JSON to the parser unless it is too deep", () => {
    for (const text of ["", "not json", '{"a":"unterminated', "]]]]", "}{"]) expect(deepestPath(text)).toBeUndefined();
    expect(textProblem("[".repeat(65), "body")).toMatch(/^0(\.0)+\.?…: nested deeper than 64 levels$/);
  });
});

describe("JSON text in a string the gateway parses", () => {
  const call = (args: string) => ({ messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }] }] });
  const detail = (result: string, type = "reasoning.server_tool_call") => ({ messages: [{ role: "assistant", reasoning_details: [{ type, arguments: "{}", result }] }] });
  const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it("is held to the same depth as the body: a tool call's arguments, a server call's result", () => {
    expect(inputProblem(call(deep(maxInputDepth)), "body")).toBeUndefined();
    expect(inputProblem(call(deep(maxInputDepth + 1)), "body")).toBe("messages.0.tool_calls.0.function.arguments: nested deeper than 64 levels");
    expect(inputProblem({ input: [{ type: "function_call", arguments: deep(10_000) }] }, "body")).toBe("input.0.arguments: nested deeper than 64 levels");
    expect(inputProblem(detail(deep(1_000)), "body")).toBe("messages.0.reasoning_details.0.result: nested deeper than 64 levels");
  });

  it("is not looked for in other text", () => {
    expect(inputProblem(detail(deep(1_000), "reasoning.text"), "body")).toBeUndefined();
    expect(inputProblem({ messages: [{ role: "user", content: deep(1_000) }] }, "body")).toBeUndefined();
  });
});

describe("parseInput", () => {
  const schema = z.object({ messages: z.array(z.object({ role: z.string() })) });

  it("stops at the first bad item of a million instead of building a million issues", () => {
    const value = { messages: new Array<number>(1_000_000).fill(0) };
    let thrown: unknown;
    try {
      parseInput(schema, value, "body");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    // One issue: a million would be told as "(and 999995 more)".
    expect((thrown as HttpError).message).toBe("Invalid body: messages.0: Invalid input: expected object, received number");
  });

  it("refuses input nested too deep before its schema sees it", () => {
    expect(() => parseInput(z.unknown(), { tools: nested(200) }, "body")).toThrow(/^Invalid body: tools(\.a)+…: nested deeper than 64 levels$/);
  });
});

describe("describeZodError", () => {
  it("lists the first five problems, each short, and counts the rest", () => {
    const result = z.array(z.string()).safeParse(new Array<number>(1000).fill(0));
    expect(result.success).toBe(false);
    const message = describeZodError(result.error!, "body");
    expect(message.match(/expected string/g)).toHaveLength(5);
    expect(message).toMatch(/ \(and 995 more\)$/);
    const long = z.object({ [`k${"x".repeat(500)}`]: z.enum(Array.from({ length: 200 }, (_, i) => `option-${i}`) as [string, ...string[]]) });
    const told = describeZodError(long.safeParse({}).error!, "body");
    expect(told.length).toBeLessThan(400);
  });
});
