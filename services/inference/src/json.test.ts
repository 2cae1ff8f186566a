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
});
