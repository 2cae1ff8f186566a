import { picoToUsd, toPico, type Queryable } from "@switchyard/runtime";
import { noUsage, type KeyUsage } from "../keys/records.js";
import { windowStarts } from "./windows.js";

interface UsageRow {
  key_hash: string;
  total: string;
  daily: string;
  weekly: string;
  monthly: string;
  byok_total: string;
  byok_daily: string;
  byok_weekly: string;
  byok_monthly: string;
}

const usd = (decimal: string) => picoToUsd(toPico(decimal));

/** Settled spend of keys per window, from the ledger's daily sums; keys without spend read all zeros. */
export async function keyUsages(db: Queryable, hashes: readonly string[], now = new Date()): Promise<Map<string, KeyUsage>> {
  const usages = new Map<string, KeyUsage>();
  if (hashes.length === 0) return usages;
  const starts = windowStarts(now);
  const rows = await db.query<UsageRow>(
    `SELECT key_hash,
       sum(cost)::text AS total,
       coalesce(sum(cost) FILTER (WHERE day >= $2::date), 0)::text AS daily,
       coalesce(sum(cost) FILTER (WHERE day >= $3::date), 0)::text AS weekly,
       coalesce(sum(cost) FILTER (WHERE day >= $4::date), 0)::text AS monthly,
       sum(byok_cost)::text AS byok_total,
       coalesce(sum(byok_cost) FILTER (WHERE day >= $2::date), 0)::text AS byok_daily,
       coalesce(sum(byok_cost) FILTER (WHERE day >= $3::date), 0)::text AS byok_weekly,
       coalesce(sum(byok_cost) FILTER (WHERE day >= $4::date), 0)::text AS byok_monthly
     FROM identity.key_spend WHERE key_hash = ANY($1::text[]) GROUP BY key_hash`,
    [hashes, starts.day, starts.week, starts.month],
  );
  for (const row of rows) {
    usages.set(row.key_hash, {
      total: usd(row.total),
      daily: usd(row.daily),
      weekly: usd(row.weekly),
      monthly: usd(row.monthly),
      byokTotal: usd(row.byok_total),
      byokDaily: usd(row.byok_daily),
      byokWeekly: usd(row.byok_weekly),
      byokMonthly: usd(row.byok_monthly),
    });
  }
  return usages;
}

export const keyUsage = async (db: Queryable, hash: string): Promise<KeyUsage> => (await keyUsages(db, [hash])).get(hash) ?? noUsage;
