import { Field } from "../components/ui.js";
import { plainAmount } from "../format.js";
import { optionalMoney, optionalNumber, resetOptions, type ApiKey, type LimitReset } from "./keys-api.js";

/** A key's spending and rate limits as typed into its form: text until submitted. */
export interface LimitValues {
  limit: string;
  reset: LimitReset | "";
  rate: string;
}

export const noLimits: LimitValues = { limit: "", reset: "", rate: "" };

const text = (value: number | null) => (value === null ? "" : plainAmount(value));

export const limitsOf = (key: ApiKey): LimitValues => ({ limit: text(key.limit), reset: key.limit_reset ?? "", rate: text(key.rate_limit_per_minute) });

/** The request fields for the limits; throws, naming the field, on a number the API would refuse. */
export const limitBody = (v: LimitValues) => ({
  limit: optionalMoney(v.limit, "Spending limit"),
  limit_reset: v.reset || null,
  rate_limit_per_minute: optionalNumber(v.rate, "Rate limit per minute", true),
});

/** How often a limit or budget starts again; keys call it "Limit resets", guardrails "Budget resets". */
export function ResetField({ label, value, onChange }: { label: string; value: LimitReset | ""; onChange: (value: LimitReset | "") => void }) {
  return (
    <Field label={label}>
      <select value={value} onChange={(e) => onChange(e.currentTarget.value as LimitReset | "")}>
        {resetOptions.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** The limit fields a key's create and edit forms share, for a `form-grid`. */
export function LimitFields({ value, onChange }: { value: LimitValues; onChange: (patch: Partial<LimitValues>) => void }) {
  return (
    <>
      <Field label="Spending limit (USD)" hint="Empty means no limit.">
        <input inputMode="decimal" value={value.limit} autoComplete="off" onInput={(e) => onChange({ limit: e.currentTarget.value })} />
      </Field>
      <ResetField label="Limit resets" value={value.reset} onChange={(reset) => onChange({ reset })} />
      <Field label="Rate limit per minute" hint="Empty means the gateway's default.">
        <input inputMode="numeric" value={value.rate} autoComplete="off" onInput={(e) => onChange({ rate: e.currentTarget.value })} />
      </Field>
    </>
  );
}
