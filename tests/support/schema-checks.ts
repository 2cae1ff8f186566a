import { expect } from "vitest";
import type { z } from "zod";

/** The paths of every issue a schema finds in a value; empty when it parses. */
export const issuePaths = (schema: z.ZodType, value: unknown): string[] => {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join("."));
};

/** What a value looks like after crossing the wire as JSON. */
export const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Our schema accepts the sample, and so does the SDK after a JSON round trip; returns the SDK's parse. */
export function expectBothAccept(ours: z.ZodType, sdk: z.ZodType, value: unknown): unknown {
  expect(issuePaths(ours, value)).toEqual([]);
  const result = sdk.safeParse(wire(value));
  expect(result.error).toBeUndefined();
  return result.data;
}
