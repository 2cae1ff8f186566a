import { useState } from "preact/hooks";
import type { PageProps } from "../app.js";
import { LoadError, Loading } from "../components/ui.js";
import { useLoad } from "../use-load.js";
import { ModelsTable, type CatalogModel, type ModelList } from "./models-catalog.js";
import { EndpointsDialog } from "./models-endpoints.js";
import { ProvidersTable, WorkspaceProviderKeys, type Provider } from "./models-providers.js";
import "./models.css";

export function ModelsPage({ call }: PageProps) {
  const providers = useLoad((signal) => call<{ data: Provider[] }>("/providers", { signal }), [call]);
  const models = useLoad((signal) => call<ModelList>("/models", { query: { output_modalities: "all" }, signal }), [call]);
  const [open, setOpen] = useState<CatalogModel | null>(null);

  return (
    <div class="models-page">
      <section aria-labelledby="providers-title">
        <h2 id="providers-title">Providers</h2>
        <LoadError what="Providers" error={providers.error} onRetry={providers.reload} />
        {providers.loading && !providers.data ? (
          <Loading />
        ) : (
          providers.data && <ProvidersTable providers={providers.data.data} />
        )}
        <WorkspaceProviderKeys call={call} providers={providers.data?.data ?? []} />
      </section>
      <section aria-labelledby="models-title">
        <h2 id="models-title">Models</h2>
        <LoadError what="Models" error={models.error} onRetry={models.reload} />
        {models.loading && !models.data ? <Loading /> : models.data && <ModelsTable models={models.data.data} onEndpoints={setOpen} />}
      </section>
      {open && <EndpointsDialog call={call} modelId={open.id} onClose={() => setOpen(null)} />}
    </div>
  );
}
