import { z } from "zod";

export const isoTimestamp = z.string().describe("ISO 8601 UTC timestamp");
export const uuid = z.uuid();
export const limitReset = z.enum(["daily", "weekly", "monthly"]);
export type LimitReset = z.infer<typeof limitReset>;

/** A query-string integer: `"10"` → 10; anything else is a 400 naming the parameter. */
export const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, "must be an integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const queryBool = z.enum(["true", "false"]).transform((v) => v === "true");
