import { useEffect, useState } from "preact/hooks";
import { Field } from "../components/ui.js";

/** The filters as the person set them; empty strings match everything. */
export interface Filters {
  model: string;
  provider: string;
  status: string;
  operation: string;
  key: string;
  from: string;
  to: string;
}

export const noFilters: Filters = { model: "", provider: "", status: "", operation: "", key: "", from: "", to: "" };

export interface KeyOption {
  hash: string;
  name: string;
  disabled: boolean;
}

/** Typing pauses this long before the list is asked again. */
const DEBOUNCE_MS = 400;

const statuses = ["completed", "error", "cancelled"];
const operations = ["chat", "embeddings", "rerank", "transcription", "image", "speech"];

/** A `datetime-local` value read as UTC, as the hint says; undefined when empty or unreadable. */
export function utcInstant(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The `GET /generations` query of the filters, or why it cannot be asked. */
export function queryOf(f: Filters): { query: Record<string, string | undefined>; problem: string | null } {
  const from = utcInstant(f.from);
  const to = utcInstant(f.to);
  const query = {
    model: f.model.trim() || undefined,
    provider: f.provider.trim() || undefined,
    status: f.status || undefined,
    operation: f.operation || undefined,
    api_key_hash: f.key || undefined,
    from,
    to,
  };
  const problem = from && to && from >= to ? "From must be before To." : null;
  return { query, problem };
}

export const isFiltered = (f: Filters) => Object.values(f).some((v) => v.trim() !== "");

/** The toolbar above the generation list: selects apply at once, typed text after a short pause. */
export function ActivityFilters({ value, keys, onChange }: { value: Filters; keys: KeyOption[]; onChange: (patch: Partial<Filters>) => void }) {
  const [model, setModel] = useState(value.model);
  const [provider, setProvider] = useState(value.provider);
  useEffect(() => {
    if (model === value.model && provider === value.provider) return;
    const timer = setTimeout(() => onChange({ model, provider }), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [model, provider]);
  // Clearing the filters from outside empties what was typed too.
  useEffect(() => setModel(value.model), [value.model]);
  useEffect(() => setProvider(value.provider), [value.provider]);
  const known = new Set(keys.map((k) => k.hash));

  return (
    <div class="toolbar activity-filters">
      <Field label="Model">
        <input type="text" value={model} placeholder="e.g. openai/gpt-4o" spellcheck={false} onInput={(e) => setModel(e.currentTarget.value)} />
      </Field>
      <Field label="Provider">
        <input type="text" value={provider} placeholder="e.g. openai" spellcheck={false} onInput={(e) => setProvider(e.currentTarget.value)} />
      </Field>
      <Field label="Status">
        <select value={value.status} onChange={(e) => onChange({ status: e.currentTarget.value })}>
          <option value="">Any</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Operation">
        <select value={value.operation} onChange={(e) => onChange({ operation: e.currentTarget.value })}>
          <option value="">Any</option>
          {operations.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Key">
        <select value={value.key} onChange={(e) => onChange({ key: e.currentTarget.value })}>
          <option value="">Any key</option>
          {value.key && !known.has(value.key) && <option value={value.key}>{value.key.slice(0, 10)}…</option>}
          {keys.map((k) => (
            <option key={k.hash} value={k.hash}>
              {k.disabled ? `${k.name} (disabled)` : k.name}
            </option>
          ))}
        </select>
      </Field>
      {/* The UTC hint sits outside the labels (the page shows it), so the fields are named just "From" and "To". */}
      <Field label="From">
        <input type="datetime-local" aria-describedby="activity-time-hint" value={value.from} onChange={(e) => onChange({ from: e.currentTarget.value })} />
      </Field>
      <Field label="To">
        <input type="datetime-local" aria-describedby="activity-time-hint" value={value.to} onChange={(e) => onChange({ to: e.currentTarget.value })} />
      </Field>
      {isFiltered(value) && (
        <button type="button" class="quiet activity-clear" onClick={() => onChange(noFilters)}>
          Clear filters
        </button>
      )}
    </div>
  );
}
