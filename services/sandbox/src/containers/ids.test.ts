import { describe, expect, it } from "vitest";
import { generationBase, restartedId, sanitizeKey, sessionBase } from "./ids.js";

describe("container ids", () => {
  it("keeps letters, digits, '_' and '-' of a session key and replaces the rest", () => {
    expect(sessionBase("chat 42/éa")).toBe("sess_chat_42__a");
    expect(sessionBase("user-7_ok")).toBe("sess_user-7_ok");
  });

  it("cuts a long key short with a hash of the whole, so long keys stay apart and ids fit 40 characters", () => {
    const a = sanitizeKey("x".repeat(100));
    const b = sanitizeKey(`${"x".repeat(99)}y`);
    expect(a).toHaveLength(27);
    expect(a).not.toBe(b);
    expect(restartedId(sessionBase("x".repeat(100))).length).toBeLessThanOrEqual(40);
  });

  it("names a request's container after its generation, without repeating the prefix", () => {
    expect(generationBase("gen-1795504751-abc")).toBe("gen_1795504751-abc");
  });

  it("gives a restarted container a fresh -r<nonce> suffix each time", () => {
    const first = restartedId("sess_a");
    expect(first).toMatch(/^sess_a-r[A-Za-z0-9]{6}$/);
    expect(new Set(Array.from({ length: 50 }, () => restartedId("sess_a"))).size).toBe(50);
  });
});
