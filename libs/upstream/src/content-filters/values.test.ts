import { describe, expect, it } from "vitest";
import { compileFilters, type Finding } from "./scan.js";
import { filterJsonText, filterStrings } from "./values.js";

const redacting = compileFilters([{ guardrailId: "g1", kind: "builtin", slug: "email", action: "redact", label: "[EMAIL]" }]);
const email = "ada@example.org";

/** Objects `depth` levels deep, each holding the next under `a` and a string under `b`, around `leaf`. */
function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value, b: `level ${depth - i}` };
  return value;
}

describe("filterStrings", () => {
  it("redacts strings at every depth, in the order they are written, and keeps what it left alone", () => {
    const untouched = { x: [1, "plain", null, true] };
    const value = { first: email, list: [untouched, [`to ${email}`]], last: { deep: email, keep: "no" } };
    const found: Finding[][] = [];
    const walked = filterStrings(redacting, value, "other", found) as typeof value;
    expect(walked).toEqual({ first: "[EMAIL]", list: [untouched, ["to [EMAIL]"]], last: { deep: "[EMAIL]", keep: "no" } });
    expect(Object.keys(walked)).toEqual(["first", "list", "last"]);
    expect(walked.list[0]).toBe(untouched);
    expect(found.map((f) => f.length)).toEqual([1, 0, 1, 1, 0]);
    expect(filterStrings(redacting, untouched, "other", [])).toBe(untouched);
    expect(filterStrings(redacting, email, "other", [])).toBe("[EMAIL]");
    expect(filterStrings(redacting, 7, "other", [])).toBe(7);
  });

  it("walks a value 100,000 levels deep without overflowing the stack", () => {
    let value: unknown = email;
    for (let i = 0; i < 100_000; i++) value = [value];
    const found: Finding[][] = [];
    let walked = filterStrings(redacting, value, "other", found);
    for (let i = 0; i < 100_000; i++) walked = (walked as unknown[])[0];
    expect(walked).toBe("[EMAIL]");
    expect(found).toHaveLength(1);
  });
});

describe("filterJsonText", () => {
  it("redacts JSON text by its strings at the limit of 64 levels", () => {
    const text = JSON.stringify(nested(63, email));
    const found: Finding[][] = [];
    expect(JSON.parse(filterJsonText(redacting, text, "other", found))).toEqual(nested(63, "[EMAIL]"));
  });

  it("scans text nested deeper whole, as text that is not JSON, instead of parsing it", () => {
    for (const depth of [65, 10_000, 1_000_000]) {
      const text = `${'{"a":'.repeat(depth)}"${email}"${"}".repeat(depth)}`;
      const found: Finding[][] = [];
      const filtered = filterJsonText(redacting, text, "other", found);
      expect(filtered).toBe(text.replace(email, "[EMAIL]"));
      expect(found.flat()).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 1 })]);
    }
  });
});
