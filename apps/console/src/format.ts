const count = new Intl.NumberFormat("en-US");

/**
 * The decimals an amount needs: down to the picodollar the gateway keeps money to, and no further than the
 * 15 significant digits a JavaScript number holds, so sums of amounts do not show floating-point noise.
 */
const moneyDigits = new Intl.NumberFormat("en-US", { minimumFractionDigits: 0, maximumFractionDigits: 12, maximumSignificantDigits: 15, roundingPriority: "lessPrecision" });
/** No charge is below a picodollar, but a price per token can be: its first significant digits show it is not zero. */
const belowPico = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 2 });
/** Dollars with cents and up to 12 decimals, by the number of decimals. */
const usdByDecimals = Array.from({ length: 13 }, (_, d) => {
  const digits = Math.max(2, d);
  return new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: digits, maximumFractionDigits: digits });
});

function usd(value: number): string {
  if (value !== 0 && Math.abs(value) < 5e-13) return belowPico.format(value);
  const decimals = moneyDigits.formatToParts(value).find((p) => p.type === "fraction")?.value.length ?? 0;
  return usdByDecimals[decimals]!.format(value);
}

/** An amount as a form field holds it: plain digits, never an exponent (`String(1e-7)` is "1e-7"). */
const plainFormat = new Intl.NumberFormat("en-US", { useGrouping: false, maximumFractionDigits: 12, maximumSignificantDigits: 15, roundingPriority: "lessPrecision" });
export const plainAmount = (value: number) => plainFormat.format(value);

/** Dollars with cents, and with every further digit the amount has: a generation often costs a millionth of a dollar. */
export const money = (value: number | null | undefined) => (value === null || value === undefined ? "—" : usd(value));
export const number = (value: number | null | undefined) => (value === null || value === undefined ? "—" : count.format(value));
export const percent = (value: number | null | undefined) => (value === null || value === undefined || !Number.isFinite(value) ? "—" : `${(value * 100).toFixed(1)}%`);
export const millis = (value: number | null | undefined) => (value === null || value === undefined ? "—" : value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${count.format(Math.round(value))} ms`);

/**
 * A latency axis's labels: one unit along the whole axis (seconds once it reaches 10 s), with the decimals that
 * write each tick as it is, so that two ticks never read alike.
 */
export function latencyTicks(ticks: number[]): string[] {
  const seconds = ticks.some((t) => t >= 10_000);
  const scaled = ticks.map((t) => (seconds ? t / 1000 : t));
  let decimals = 0;
  while (decimals < 3 && scaled.some((t) => Math.abs(t * 10 ** decimals - Math.round(t * 10 ** decimals)) > 1e-6)) decimals++;
  const format = new Intl.NumberFormat("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  return scaled.map((t) => `${format.format(t)} ${seconds ? "s" : "ms"}`);
}

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
