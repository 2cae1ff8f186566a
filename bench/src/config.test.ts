import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { baselineChild } from "./config.js";

describe("the baseline target's checkout (BENCH_BASELINE_DIR)", () => {
  it("is refused when unset or not built, saying what to do", async () => {
    expect(() => baselineChild(undefined)).toThrow("set BENCH_BASELINE_DIR to another checkout of Switchyard, built");
    const empty = await mkdtemp(join(tmpdir(), "switchyard-baseline-"));
    try {
      expect(() => baselineChild(empty)).toThrow(`${join(empty, "bench/dist/gateway-child.js")} is missing; build that checkout first`);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("runs the gateway child of a built checkout", () => {
    const checkout = resolve(fileURLToPath(new URL("../..", import.meta.url)));
    expect(baselineChild(checkout)).toBe(join(checkout, "bench/dist/gateway-child.js"));
  });
});
