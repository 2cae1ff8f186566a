import type { HoldDecision } from "@switchyard/contracts";
import { HttpError } from "@switchyard/runtime";
import { afterEach, describe, expect, it, vi } from "vitest";
import { holdAmount, lateReleaseMs, requestHold, type SpendHolds } from "./holds.js";

/** Identity's holds, failing each hold call with `failure`; `found` says what its releases find. */
function holdsFailingWith(failure: Error, found = true) {
  const released: string[] = [];
  const holds: SpendHolds = {
    hold: (): Promise<HoldDecision> => Promise.reject(failure),
    release: async (id) => (released.push(id), found),
  };
  return { context: { holds, generationId: "gen-1", keyHash: "k", ttlMs: 60_000 }, released };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => vi.useRealTimers());

describe("a hold call that got no answer", () => {
  it.each([
    ["timed out", new Error("/internal/holds timed out after 5000 ms")],
    ["answered 5xx", new Error("/internal/holds answered 500: Internal error")],
  ])("(%s) is a 503 and releases the hold it may have written", async (_how, failure) => {
    const { context, released } = holdsFailingWith(failure);
    await expect(requestHold(context, 10n)).rejects.toMatchObject({ status: 503, message: "Spend limits cannot be checked right now; try again shortly" });
    await settled();
    expect(released).toEqual(["gen-1"]);
  });

  it("releases it for requests that hold a fixed amount (media, embeddings, rerank) too", async () => {
    const { context, released } = holdsFailingWith(new Error("socket hang up"));
    await expect(holdAmount(context, 10n, false)).rejects.toMatchObject({ status: 503 });
    await settled();
    expect(released).toEqual(["gen-1"]);
  });

  it("releases it once more later when the first release found none, as identity may still have been writing it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const { context, released } = holdsFailingWith(new Error("timed out"), false);
    await expect(requestHold(context, 10n)).rejects.toMatchObject({ status: 503 });
    await settled();
    expect(released).toEqual(["gen-1"]);
    vi.advanceTimersByTime(lateReleaseMs);
    expect(released).toEqual(["gen-1", "gen-1"]);
  });

  it("releases nothing when identity refused the call it read: no hold was written", async () => {
    const { context, released } = holdsFailingWith(new HttpError("forbidden", "not yours"));
    await expect(requestHold(context, 10n)).rejects.toMatchObject({ status: 403 });
    await settled();
    expect(released).toEqual([]);
  });
});
