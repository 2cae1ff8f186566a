import type { LimitReset } from "@switchyard/contracts";

/** First UTC day (`YYYY-MM-DD`) of the current day, week (Monday) and calendar month. */
export interface WindowStarts {
  day: string;
  week: string;
  month: string;
}

const msPerDay = 86_400_000;

/** The UTC calendar day of an instant. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Where each usage window begins at `now`: midnight UTC, Monday 00:00 UTC, the 1st 00:00 UTC. Usage is
 * the ledger summed from these days on; nothing is ever zeroed.
 */
export function windowStarts(now: Date): WindowStarts {
  const day = utcDay(now);
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  const monday = new Date(Date.parse(`${day}T00:00:00Z`) - sinceMonday * msPerDay);
  return { day, week: utcDay(monday), month: `${day.slice(0, 7)}-01` };
}

/** The first day counted for a limit or budget that resets on `reset`; null counts all time. */
export function windowStart(reset: LimitReset | null, starts: WindowStarts): string | null {
  if (reset === "daily") return starts.day;
  if (reset === "weekly") return starts.week;
  if (reset === "monthly") return starts.month;
  return null;
}
