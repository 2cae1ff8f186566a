import type { z } from "zod";

/**
 * Checks for values Postgres would otherwise change on the way in: a timestamp it rolls over or rounds into
 * a year nothing can read back, an amount it rounds to its 12 decimal places. What a client sent is either
 * kept exactly or refused with a 400 naming the field, never silently altered.
 */

const timestampParts = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * The instant a timestamp names, in microseconds since the epoch as Postgres rounds it (half up, which
 * agrees with its rounding at every bound checked here); undefined when its fields are no real date and
 * time. `Date.parse` rolls 2030-02-30 over to March 2nd: here the fields must survive a round trip.
 */
export function instantMicros(value: string): bigint | undefined {
  const parts = timestampParts.exec(value);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const survives =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!survives) return undefined;
  const [sign, offsetHours, offsetMinutes] = [parts[8], Number(parts[9] ?? 0), Number(parts[10] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const fraction = (parts[7] ?? "").padEnd(7, "0");
  const micros = BigInt(fraction.slice(0, 6)) + (Number(fraction[6]) >= 5 ? 1n : 0n);
  const offset = BigInt((offsetHours * 60 + offsetMinutes) * 60) * 1_000_000n * (sign === "-" ? -1n : 1n);
  return BigInt(date.getTime()) * 1000n + micros - offset;
}

/** 10000-01-01T00:00:00Z: a timestamp at or past it has no `YYYY` form, which clients and the SDK expect. */
const year10000Micros = 253_402_300_800_000_000n;

/** Whether the instant is one Postgres keeps and gives back with a four-digit year. */
export const beforeYear10000 = (value: string): boolean => {
  const micros = instantMicros(value);
  return micros === undefined || micros < year10000Micros;
};

export const realInstant = (value: string): boolean => instantMicros(value) !== undefined;

/** Whether a timestamp's UTC offset is one Postgres reads: at most 15:59 either way (ISO 8601 allows 23:59). */
export const postgresOffset = (value: string): boolean => /(?:Z|[+-](?:0\d|1[0-5]):\d{2})$/.test(value);
export const postgresOffsetMessage = "must have a UTC offset of at most 15:59 either way";

/** A timestamp schema that also refuses what Postgres would refuse, roll over or round past the year 9999. */
export const storedInstant = <T extends z.ZodType<string>>(schema: T): T =>
  schema
    .refine(realInstant, "must be a real date and time")
    .refine(postgresOffset, postgresOffsetMessage)
    .refine(beforeYear10000, "must be before 10000-01-01T00:00:00Z once rounded to the microsecond");

/**
 * Whether an amount of dollars is a whole number of picodollars (at most 12 decimal places), which the
 * numeric(22, 12) columns keep exactly. The decimal checked is the shortest one that reads back as the
 * number, which is also what the database driver sends: 4e-13 would be stored as 0, and a key limited to 0
 * refuses every request.
 */
export function wholePicodollars(amount: number): boolean {
  if (!Number.isFinite(amount)) return false;
  const [digits = "", exponent = "0"] = String(Math.abs(amount)).split("e");
  const decimals = (digits.split(".")[1] ?? "").length - Number(exponent);
  return decimals <= 12;
}

/** An amount schema that also refuses what the database would round. */
export const picodollarAmount = <T extends z.ZodType<number>>(schema: T): T =>
  schema.refine(wholePicodollars, "must be a whole number of picodollars (at most 12 decimal places)");
