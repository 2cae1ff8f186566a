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
  supported_parameters: string[];
  /** Percent of attempts without a provider-side failure; null until the endpoint was tried in the window. */
  uptime_last_5m: number | null;
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

/** Uptime is a percentage, as OpenRouter writes it (99.5). */
const uptime = (value: number) => percent(value / 100);

/** Below these percentages of attempts without a provider-side failure, an endpoint is failing, or degraded. */
const FAILING_BELOW = 50;
const DEGRADED_BELOW = 95;

/**
 * The endpoint's health from its latest measured uptime: the last 5 minutes, else the last 30 (the catalog's
 * `status` is always 0, so it says nothing). An endpoint not tried in the last 30 minutes has no data.
 */
function Health({ endpoint: e }: { endpoint: ModelEndpoint }) {
  const [span, value] = e.uptime_last_5m !== null ? ["5 minutes", e.uptime_last_5m] : e.uptime_last_30m !== null ? ["30 minutes", e.uptime_last_30m] : [null, null];
  if (value === null) return <span class="badge muted" title="Not tried in the last 30 minutes">No data</span>;
  const title = `${uptime(value)} of attempts without a provider-side failure in the last ${span}`;
  if (value < FAILING_BELOW) return <span class="badge bad" title={title}>Failing</span>;
  if (value < DEGRADED_BELOW) return <span class="badge warn" title={title}>Degraded</span>;
  return <span class="badge ok" title={title}>Healthy</span>;
}

/**
 * One endpoint; `index` is its place in the listing, which makes its heading's id. `place` numbers the endpoints
 * of a provider that has several for the model: they share its name and slug.
 */
function Endpoint({ endpoint: e, index, place }: { endpoint: ModelEndpoint; index: number; place: { nth: number; of: number } | null }) {
  return (
    <section class="endpoint panel" aria-labelledby={`endpoint-${index}`}>
      <div class="endpoint-head">
        <h3 id={`endpoint-${index}`}>{place ? `${e.provider_name} · endpoint ${place.nth} of ${place.of}` : e.provider_name}</h3>
        <Health endpoint={e} />
      </div>
      <dl class="facts">
        <dt>Provider slug</dt>
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
        {e.uptime_last_5m !== null && (
          <>
            <dt>Uptime, last 5 min</dt>
            <dd>{uptime(e.uptime_last_5m)}</dd>
          </>
        )}
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

function placeOf(endpoints: ModelEndpoint[], index: number): { nth: number; of: number } | null {
  const tag = endpoints[index]!.tag;
  const same = endpoints.filter((e) => e.tag === tag).length;
  return same > 1 ? { nth: endpoints.slice(0, index + 1).filter((e) => e.tag === tag).length, of: same } : null;
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
          {data?.map((e, i) => (
            <Endpoint key={i} endpoint={e} index={i} place={placeOf(data, i)} />
          ))}
        </div>
      )}
    </Dialog>
  );
}
