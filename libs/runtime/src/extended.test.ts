import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { extended } from "./extended.js";

/** Makes 20,000 objects by `form` in a fresh process and says whether two made last share a hidden class. */
function sharesShape(form: string): boolean {
  const script = `
    const extended = ${extended.toString()};
    const base = { id: "gen-1", model: "m" };
    const make = (i) => ${form};
    for (let i = 0; i < 20000; i++) make(i);
    console.log(%HaveSameMap(make(1), make(2)));`;
  const out = execFileSync(process.execPath, ["--allow-natives-syntax", "-e", script], { encoding: "utf8" });
  return out.trim() === "true";
}

describe("extended", () => {
  it("is the base with the extra fields added and overriding, as a spread is", () => {
    const base = { model: "a", stream: false, messages: [] as string[] };
    const out = extended(base, { stream: true, stream_options: { include_usage: true } });
    expect(out).toEqual({ model: "a", stream: true, messages: [], stream_options: { include_usage: true } });
    expect(Object.keys(out)).toEqual(["model", "stream", "messages", "stream_options"]);
    expect(base).toEqual({ model: "a", stream: false, messages: [] });
  });

  it("gives the objects it makes one shape, where a spread and an added field do not", () => {
    expect(sharesShape("extended(base, { index: i })")).toBe(true);
  });
});
