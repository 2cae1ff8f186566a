import { describe, expect, it } from "vitest";
import { textOf } from "./chunk-text.js";

/** `text`'s UTF-8 bytes cut at the given byte offsets. */
const cut = (text: string, ...at: number[]) => {
  const bytes = Buffer.from(text, "utf8");
  return [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length));
};

describe("textOf", () => {
  it("decodes characters whose bytes are split between chunks", () => {
    // "é" is two bytes and "🙂" four: cut inside both.
    expect(textOf(cut("café 🙂 done", 4, 8))).toBe("café 🙂 done");
    expect(textOf([])).toBe("");
    expect(textOf(cut("one chunk"))).toBe("one chunk");
  });

  it("gives each body its own text when bodies of other sizes came before, larger and smaller", () => {
    for (const [letter, length] of [["a", 70_000], ["b", 300], ["c", 250_000], ["d", 9_000]] as const) {
      const text = `{"x":"${letter.repeat(length)}"}`;
      expect(textOf(cut(text, 1, Math.floor(text.length / 2)))).toBe(text);
    }
  });

  it("decodes bodies above the limit of the shared buffer, and in other encodings", () => {
    const large = "z".repeat(3 * 1024 * 1024);
    expect(textOf(cut(large, 1000, 2_000_000))).toBe(large);
    expect(textOf([Buffer.from([0x63, 0x61]), Buffer.from([0x66, 0xe9])], "latin1")).toBe("café");
  });
});
