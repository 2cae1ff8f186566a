import { describe, expect, it } from "vitest";
import { assertSubjectPattern, subjectMatches } from "./subject-match.js";

describe("subject matching", () => {
  it("follows NATS wildcards", () => {
    expect(subjectMatches("identity.api_key.>", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches("identity.*.updated.v1", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches(">", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches("identity.api_key.updated.v1", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches("identity.api_key.>", "identity.api_key")).toBe(false);
    expect(subjectMatches("identity.workspace.>", "identity.api_key.updated.v1")).toBe(false);
    expect(subjectMatches("identity.*", "identity.api_key.updated.v1")).toBe(false);
    expect(subjectMatches("a.b", "a.b.c")).toBe(false);
    expect(subjectMatches("a.b.c", "a.b")).toBe(false);
  });

  it("rejects malformed patterns, and wildcard domains for durable consumers", () => {
    expect(() => assertSubjectPattern("identity.>", true)).not.toThrow();
    expect(() => assertSubjectPattern("*.api_key.>", false)).not.toThrow();
    expect(() => assertSubjectPattern("*.api_key.>", true)).toThrow(/domain/);
    expect(() => assertSubjectPattern(">", true)).toThrow(/domain/);
    expect(() => assertSubjectPattern("identity.>.v1", false)).toThrow(/invalid/);
    expect(() => assertSubjectPattern("identity..v1", false)).toThrow(/invalid/);
    expect(() => assertSubjectPattern("identity.a*", false)).toThrow(/invalid/);
  });
});
