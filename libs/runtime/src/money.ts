/**
 * Money in exact integers: USD decimal strings (prices, ledger sums) are converted to picodollars
 * (1e-12 USD) so that sums never drift the way binary floating point does.
 */
const scale = 12;
const unit = 10n ** BigInt(scale);

/** Conversions remembered (bounded): prices are a few dozen strings converted on every request. */
const converted = new Map<string, bigint>();

/** `"0.00000015"` → 150000n. Trailing zeros beyond 12 places (as numeric columns print them) are fine. */
export function toPico(decimal: string | undefined): bigint {
  if (!decimal) return 0n;
  const known = converted.get(decimal);
  if (known !== undefined) return known;
  const pico = parsePico(decimal);
  if (converted.size >= 10_000) converted.clear();
  converted.set(decimal, pico);
  return pico;
}

function parsePico(decimal: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!match) throw new Error(`not a decimal amount: ${decimal}`);
  const fraction = (match[2] ?? "").padEnd(scale, "0");
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale))) throw new Error(`amount ${decimal} is finer than 1e-12 USD`);
  return BigInt(match[1]!) * unit + BigInt(fraction.slice(0, scale));
}

export const picoToUsd = (pico: bigint): number => Number(pico) / Number(unit);

/** USD decimal string of picodollars, exact: what events, holds and the ledger carry. */
export function picoToDecimal(pico: bigint): string {
  const sign = pico < 0n ? "-" : "";
  const abs = pico < 0n ? -pico : pico;
  const whole = abs / unit;
  const fraction = (abs % unit).toString().padStart(scale, "0").replace(/0+$/, "");
  return `${sign}${fraction ? `${whole}.${fraction}` : `${whole}`}`;
}
