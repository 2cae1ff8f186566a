import type { Call } from "../api.js";
import { Dialog, Empty, ErrorNote, Loading } from "../components/ui.js";
import { number, percent } from "../format.js";
import { useLoad } from "../use-load.js";
import { ExtraPrices, perMillion } from "./models-catalog.js";

/** The fields of `GET /models/{author}/{slug}/endpoints` the console reads. */
export interface ModelEndpoint {
  name: string;
  provider_name: string;
  tag: string;
  context_length: number;
  max_completion_tokens: number | null;
  pricing: Record<string, string | number | undefined> & { prompt: string; completion: string };
  quantization: string | null;
  status?: number;
  supported_parameters: string[];
  uptime_last_30m: number | null;
  uptime_last_1d: number | null;
}

interface EndpointsAnswer {
  data: { id: string; name: string; endpoints: ModelEndpoint[] };
}

/**
 * A model id is `<author>/<slug>`, and the route takes them as two path segments; the slug itself has no
 * slash (variants like `:free` stay in it), so the first slash splits them.
 */
export function endpointsPath(modelId: string): string {
  const cut = modelId.indexOf("/");
  const author = modelId.slice(0, cut);
  const slug = modelId.slice(cut + 1);
  return `/models/${encodeURIComponent(author)}/${encodeURIComponent(slug)}/endpoints`;
}

export const loadEndpoints = (call: Call, modelId: string, signal?: AbortSignal) =>
  call<EndpointsAnswer>(endpointsPath(modelId), { signal }).then((answer) => answer.data.endpoints);

/** OpenRouter writes uptime as a percentage (99.5); a share (0.995) is read as one too. */
const uptime = (value: number) => percent(value > 1 ? value / 100 : value);

function Health({ status }: { status: number | undefined }) {
  if (status === undefined || status === 0) return <span class="badge ok">Healthy</span>;
  if (status < 0) return <span class="badge warn">Cooling down</span>;
  return <span class="badge muted">Status {status}</span>;
}

function Endpoint({ endpoint: e }: { endpoint: ModelEndpoint }) {
  return (
    <section class="endpoint panel" aria-labelledby={`endpoint-${e.tag}`}>
      <div class="endpoint-head">
        <h3 id={`endpoint-${e.tag}`}>{e.provider_name}</h3>
        <Health status={e.status} />
      </div>
      <dl class="facts">
        <dt>Upstream</dt>
        <dd>
          <code>{e.tag}</code>
          {e.quantization && <span class="hint"> · {e.quantization}</span>}
        </dd>
        <dt>Prompt</dt>
        <dd>{perMillion(e.pricing.prompt)}</dd>
        <dt>Completion</dt>
        <dd>{perMillion(e.pricing.completion)}</dd>
        <dt>Other prices</dt>
        <dd>
          <ExtraPrices pricing={e.pricing} />
        </dd>
        <dt>Context length</dt>
        <dd>{e.context_length > 0 ? number(e.context_length) : "—"}</dd>
        <dt>Max completion tokens</dt>
        <dd>{number(e.max_completion_tokens)}</dd>
        {e.uptime_last_30m !== null && (
          <>
            <dt>Uptime, last 30 min</dt>
            <dd>{uptime(e.uptime_last_30m)}</dd>
          </>
        )}
        {e.uptime_last_1d !== null && (
          <>
            <dt>Uptime, last day</dt>
            <dd>{uptime(e.uptime_last_1d)}</dd>
          </>
        )}
        <dt>Supported parameters</dt>
        <dd>
          {e.supported_parameters.length === 0 ? (
            "none"
          ) : (
            <details>
              <summary>{number(e.supported_parameters.length)}</summary>
              <p class="params">{e.supported_parameters.join(", ")}</p>
            </details>
          )}
        </dd>
      </dl>
    </section>
  );
}

/** A drawer with the provider endpoints that serve one model. */
export function EndpointsDialog({ call, modelId, onClose }: { call: Call; modelId: string; onClose: () => void }) {
  const { data, error, loading } = useLoad((signal) => loadEndpoints(call, modelId, signal), [call, modelId]);
  return (
    <Dialog title={`Endpoints of ${modelId}`} side onClose={onClose}>
      <ErrorNote error={error} />
      {loading && !data ? (
        <Loading />
      ) : data && data.length === 0 ? (
        <Empty title="No provider serves this model">Its providers have no API key on the gateway; set one and restart, or add a workspace key.</Empty>
      ) : (
        <div class="endpoints">
          {data?.map((e) => (
            <Endpoint key={e.tag} endpoint={e} />
          ))}
        </div>
      )}
    </Dialog>
  );
}
