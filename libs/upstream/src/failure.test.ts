import { describe, expect, it } from "vitest";
import { UpstreamError } from "./errors.js";
import { upstreamFailure } from "./failure.js";

describe("upstreamFailure", () => {
  it("does not call a failure of ours a provider's", () => {
    const bug = new RangeError("Maximum call stack size exceeded");
    const failure = upstreamFailure(bug, false);
    expect({ status: failure.status, message: failure.message, cause: failure.cause }).toEqual({ status: 500, message: "Internal server error", cause: bug });
  });

  it("still tells a provider's failure as one", () => {
    const failure = upstreamFailure(new UpstreamError("alpha answered 500: boom", 500, true), false);
    expect({ status: failure.status, message: failure.message }).toEqual({ status: 502, message: "Provider returned error" });
  });

  it("does not answer an abandoned request as a server bug", () => {
    expect(upstreamFailure(new DOMException("client disconnected", "AbortError"), false).status).toBe(502);
    expect(upstreamFailure(new Error("deadline passed"), true).status).toBe(524);
  });
});
