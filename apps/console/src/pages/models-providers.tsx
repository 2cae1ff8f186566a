import type { Call } from "../api.js";
import { DataTable, type Column } from "../components/table.js";
import { Empty, LoadError, Loading } from "../components/ui.js";
import { dateTime, number } from "../format.js";
import { useLoad } from "../use-load.js";
import { loadWorkspaces, type Workspace } from "./keys-api.js";

/** `GET /providers` with Switchyard's `has_api_key` and `usable`. */
export interface Provider {
  name: string;
  slug: string;
  status_page_url?: string | null;
  has_api_key?: boolean;
  usable?: boolean;
}

/** `GET /workspaces/{id}/provider-keys`: the key itself never comes back, only its label (last characters). */
interface ProviderKeySummary {
  provider: string;
  label: string;
  operator_fallback: boolean;
  created_at: string;
  updated_at: string;
}

/** The environment variable the gateway reads a provider's key from. */
export const envName = (slug: string) => `${slug.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;

function KeyStatus({ provider: p }: { provider: Provider }) {
  if (p.has_api_key) return <span class="badge ok">Key configured</span>;
  if (p.usable) return <span class="badge ok">Needs no key</span>;
  if (p.usable === undefined && p.has_api_key === undefined) return <span class="badge muted">Unknown</span>;
  return (
    <>
      <span class="badge bad">No key</span>
      <span class="hint key-hint">
        set <code>{envName(p.slug)}</code>
      </span>
    </>
  );
}

const providerColumns: Column[] = [{ title: "Name" }, { title: "Slug" }, { title: "API key" }, { title: "Status page" }];

export function ProvidersTable({ providers }: { providers: Provider[] }) {
  if (providers.length === 0) return <Empty title="No providers configured">The operator's catalog configuration names the providers the gateway calls.</Empty>;
  const ready = providers.filter((p) => p.has_api_key || p.usable).length;
  return (
    <>
      <p class="hint">
        {number(ready)} of {number(providers.length)} providers can take requests. A provider without a key serves no model until its key is set in
        the gateway's environment (or a workspace adds its own key).
      </p>
      <DataTable label="Providers" columns={providerColumns}>
        {providers.map((p) => (
          <tr key={p.slug}>
            <td>{p.name}</td>
            <td>
              <code>{p.slug}</code>
            </td>
            <td>
              <KeyStatus provider={p} />
            </td>
            <td>
              {p.status_page_url ? (
                <a href={p.status_page_url} target="_blank" rel="noopener noreferrer">
                  Status<span class="visually-hidden"> of {p.name} (opens in a new tab)</span>
                </a>
              ) : (
                <span class="hint">none</span>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

const workspaceKeyColumns: Column[] = [{ title: "Workspace" }, { title: "Provider" }, { title: "Key" }, { title: "When it fails" }, { title: "Added" }, { title: "Updated" }];

interface WorkspaceKey extends ProviderKeySummary {
  workspace: Workspace;
}

async function loadWorkspaceKeys(call: Call, signal: AbortSignal): Promise<WorkspaceKey[]> {
  const workspaces = await loadWorkspaces(call, signal);
  const lists = await Promise.all(
    workspaces.map((w) =>
      call<{ data: ProviderKeySummary[] }>(`/workspaces/${encodeURIComponent(w.id)}/provider-keys`, { signal }).then((answer) =>
        answer.data.map((k) => ({ ...k, workspace: w })),
      ),
    ),
  );
  return lists.flat();
}

/** Workspaces' own provider keys (BYOK): which providers they cover; the keys themselves stay sealed. */
export function WorkspaceProviderKeys({ call, providers }: { call: Call; providers: Provider[] }) {
  const { data, error, loading, reload } = useLoad((signal) => loadWorkspaceKeys(call, signal), [call]);
  const nameOf = (slug: string) => providers.find((p) => p.slug === slug)?.name ?? slug;
  return (
    <>
      <h3 id="workspace-keys-title">Workspace provider keys</h3>
      <LoadError what="Workspace provider keys" error={error} onRetry={reload} />
      {loading && !data ? (
        <Loading />
      ) : !data ? null : data.length === 0 ? (
        <Empty title="No workspace has its own provider key">
          A workspace can bring its own key for a provider with <code>{"PUT /api/v1/workspaces/{id}/provider-keys/{provider}"}</code>; its requests then use it.
        </Empty>
      ) : (
        <DataTable labelledBy="workspace-keys-title" columns={workspaceKeyColumns}>
          {data.map((k) => (
            <tr key={`${k.workspace.id}/${k.provider}`}>
              <td>{k.workspace.name}</td>
              <td>
                {nameOf(k.provider)} <code class="hint">{k.provider}</code>
              </td>
              <td>
                <code>{k.label}</code>
              </td>
              <td>{k.operator_fallback ? "Falls back to the operator's key" : "Fails (workspace key only)"}</td>
              <td>{dateTime(k.created_at)}</td>
              <td>{dateTime(k.updated_at)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
