import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { withTimeout } from "./deadline.js";

/** Resolves with the reason `signal` aborts with. */
const abortReason = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

describe("withTimeout", () => {
  it("aborts the work with a TimeoutError once its time is up", async () => {
    const reason = await withTimeout(new AbortController().signal, 20, abortReason);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe("TimeoutError");
  });

  it("aborts the work with the caller's reason when the caller aborts first", async () => {
    const caller = new AbortController();
    const seen = withTimeout(caller.signal, 60_000, abortReason);
    caller.abort(new Error("client disconnected"));
    expect(((await seen) as Error).message).toBe("client disconnected");
  });

  it("starts aborted when the caller already has", async () => {
    const caller = new AbortController();
    caller.abort(new Error("gone"));
    expect(await withTimeout(caller.signal, 60_000, async (signal) => signal.aborted)).toBe(true);
  });

  it("leaves no listener on the caller's signal and no abort behind once the work ends", async () => {
    const caller = new AbortController();
    let inner: AbortSignal | undefined;
    expect(await withTimeout(caller.signal, 20, async (signal) => ((inner = signal), "done"))).toBe("done");
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(inner!.aborted).toBe(false);
  });
});
