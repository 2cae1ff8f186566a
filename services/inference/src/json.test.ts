import { describe, expect, it } from "vitest";
import { objectOf } from "./json.js";

describe("objectOf", () => {
  it("reads arguments as an object, and anything else as {}", () => {
    expect(objectOf('{"city":"Paris","n":[1,2]}')).toEqual({ city: "Paris", n: [1, 2] });
    expect(objectOf("")).toEqual({});
    expect(objectOf('{"city":')).toEqual({});
    expect(objectOf("not json")).toEqual({});
    expect(objectOf("[1,2]")).toEqual({});
    expect(objectOf("null")).toEqual({});
    expect(objectOf('"text"')).toEqual({});
  });

  it("reads arguments nested deeper than a request's input may be as {}, without parsing them", () => {
    const object = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(objectOf(object(64))).toEqual(JSON.parse(object(64)));
    for (const depth of [65, 10_000, 1_000_000]) expect(objectOf(object(depth))).toEqual({});
  });
});
