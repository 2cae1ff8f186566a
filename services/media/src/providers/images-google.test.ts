import { describe, expect, it } from "vitest";
import { nearestRatio } from "./images-google.js";

describe("Gemini aspect ratios", () => {
  it.each([
    ["1:1", 1, "1:1"],
    ["1:4", 1 / 4, "9:16"],
    ["1:8", 1 / 8, "9:16"],
    ["4:1", 4, "21:9"],
    ["19.5:9", 19.5 / 9, "21:9"],
    ["9:20", 9 / 20, "9:16"],
    ["2:1", 2, "16:9"],
    ["1536x1024", 1.5, "3:2"],
  ])("draws %s as the nearest ratio it supports", (_name, value, expected) => {
    expect(nearestRatio(value)).toBe(expected);
  });
});
