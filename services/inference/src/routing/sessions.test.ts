import { describe, expect, it } from "vitest";
import { sessionEndpoints } from "./sessions.js";

describe("sessionEndpoints", () => {
  it("remembers the provider per workspace, session and model, for its time after the last request", () => {
    let clock = 0;
    const sessions = sessionEndpoints({ ttlMs: 1000, now: () => clock });
    sessions.served("w1", "s", "m", "beta");
    expect(sessions.servedBy("w1", "s", "m")).toBe("beta");
    expect(sessions.servedBy("w2", "s", "m")).toBeUndefined();
    expect(sessions.servedBy("w1", "s", "other")).toBeUndefined();
    clock = 900;
    sessions.served("w1", "s", "m", "alpha");
    clock = 1800;
    expect(sessions.servedBy("w1", "s", "m")).toBe("alpha");
    clock = 2000;
    expect(sessions.servedBy("w1", "s", "m")).toBeUndefined();
  });

  it("forgets the session used least recently once full", () => {
    const sessions = sessionEndpoints({ max: 2 });
    sessions.served("w", "a", "m", "p1");
    sessions.served("w", "b", "m", "p2");
    sessions.served("w", "a", "m", "p1");
    sessions.served("w", "c", "m", "p3");
    expect([sessions.servedBy("w", "a", "m"), sessions.servedBy("w", "b", "m"), sessions.servedBy("w", "c", "m")]).toEqual(["p1", undefined, "p3"]);
  });
});
