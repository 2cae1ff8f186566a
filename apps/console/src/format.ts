const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat("en-US");

/** Dollars with up to six decimals: a single generation often costs a fraction of a cent. */
export const money = (value: number | null | undefined) => (value === null || value === undefined ? "—" : usd.format(value));
export const number = (value: number | null | undefined) => (value === null || value === undefined ? "—" : count.format(value));
export const percent = (value: number | null | undefined) => (value === null || value === undefined || !Number.isFinite(value) ? "—" : `${(value * 100).toFixed(1)}%`);
export const millis = (value: number | null | undefined) => (value === null || value === undefined ? "—" : value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${count.format(Math.round(value))} ms`);

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" }) + " UTC";
}

/** `YYYY-MM-DD` of a UTC day, `offset` days from today. */
export function utcDay(offset = 0): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + offset);
  return d.toISOString().slice(0, 10);
}

export const shortHash = (hash: string) => `${hash.slice(0, 10)}…`;
