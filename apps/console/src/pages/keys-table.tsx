import { Fragment } from "preact";
import { DataTable, RowActions, type Column } from "../components/table.js";
import { dateTime, money, number } from "../format.js";
import { isExpired, type ApiKey } from "./keys-api.js";

const resetWords = { daily: "resets daily", weekly: "resets weekly", monthly: "resets monthly" } as const;

function Status({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.disabled) return <span class="badge bad">Disabled</span>;
  if (isExpired(apiKey)) return <span class="badge warn">Expired</span>;
  return <span class="badge ok">Active</span>;
}

function Limit({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.limit === null) return <span class="sub-none">No limit</span>;
  return (
    <>
      {money(apiKey.limit)}
      <span class="sub">{money(apiKey.limit_remaining)} left</span>
      <span class="sub">{apiKey.limit_reset ? resetWords[apiKey.limit_reset] : "never resets"}</span>
      {apiKey.include_byok_in_limit && <span class="sub">BYOK counts toward it</span>}
    </>
  );
}

/**
 * Four periods stacked in one cell: four money columns would push the table past a laptop's width. Spend on
 * the workspace's own provider keys (BYOK) is not charged to the key, so it follows the charge, marked as such.
 */
function Usage({ apiKey: k }: { apiKey: ApiKey }) {
  const periods: [string, number, number][] = [
    ["Today", k.usage_daily, k.byok_usage_daily],
    ["This week", k.usage_weekly, k.byok_usage_weekly],
    ["This month", k.usage_monthly, k.byok_usage_monthly],
    ["Total", k.usage, k.byok_usage],
  ];
  return (
    <dl class="usage">
      {periods.map(([term, charged, byok]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>
            {money(charged)}
            {byok > 0 && <span class="sub">+ {money(byok)} BYOK</span>}
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** Dates alone keep the column narrow; the full UTC time is one hover (and one screen-reader read) away. */
function When({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={dateTime(iso)}>
      {iso.slice(0, 10)}
    </time>
  );
}

const columns: Column[] = [
  { title: "Name" },
  { title: "Label" },
  { title: "Type" },
  { title: "Status" },
  { title: "Usage" },
  { title: "Limit" },
  { title: "Rate limit" },
  { title: "Guardrails" },
  { title: "Created" },
  { title: "Actions", hidden: true },
];

export interface KeyRowActions {
  onEdit: (key: ApiKey) => void;
  onToggle: (key: ApiKey) => void;
  onDelete: (key: ApiKey) => void;
}

export function KeysTable({
  keys,
  guardrailNames,
  ownHash,
  freshHash,
  busyHash,
  actions,
}: {
  keys: ApiKey[];
  /** Guardrail names per key hash; undefined when guardrails could not be loaded. */
  guardrailNames: Map<string, string[]> | undefined;
  ownHash: string | null;
  freshHash: string | null;
  busyHash: string | null;
  actions: KeyRowActions;
}) {
  return (
    <DataTable label="Keys" class="keys-table" columns={columns}>
      {keys.map((k) => {
        const names = guardrailNames?.get(k.hash) ?? [];
        return (
          <tr key={k.hash} class={k.hash === freshHash ? "fresh" : undefined}>
            <td>
              <strong>{k.name}</strong>
              {k.hash === ownHash && <span class="sub">signed in with this key</span>}
              {k.expires_at && !isExpired(k) && (
                <span class="sub">
                  expires <When iso={k.expires_at} />
                </span>
              )}
            </td>
            <td>
              <code>{k.label}</code>
            </td>
            <td>{k.is_management_key ? <span class="badge warn">Management</span> : <span class="badge muted">Inference</span>}</td>
            <td>
              <Status apiKey={k} />
            </td>
            <td>
              <Usage apiKey={k} />
            </td>
            <td class="limit">
              <Limit apiKey={k} />
            </td>
            <td>{k.rate_limit_per_minute === null ? <span class="sub-none">default</span> : `${number(k.rate_limit_per_minute)}/min`}</td>
            <td>{guardrailNames === undefined ? "—" : names.length ? names.join(", ") : <span class="sub-none">None</span>}</td>
            <td>
              <When iso={k.created_at} />
            </td>
            <td>
              <RowActions
                name={k.name}
                actions={[
                  { label: "Edit", onClick: () => actions.onEdit(k) },
                  { label: k.disabled ? "Enable" : "Disable", disabled: busyHash === k.hash, onClick: () => actions.onToggle(k) },
                  { label: "Delete", danger: true, onClick: () => actions.onDelete(k) },
                ]}
              />
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
