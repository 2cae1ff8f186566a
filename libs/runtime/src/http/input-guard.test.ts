import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeZodError, HttpError, parseInput } from "./index.js";
import { inputProblem, maxInputDepth } from "./input-guard.js";

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
