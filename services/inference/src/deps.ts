import type { GenerationContentStore, GenerationFinder, ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { CallerVerifier, Db, HealthState, Logger, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { ResponseCache } from "./cache/lookup.js";
import type { GenerationRecorder } from "./generations/recorder.js";
import type { EndpointHealth, EndpointStats, UpstreamTimeouts } from "@switchyard/upstream";
import type { SessionEndpoints } from "./routing/sessions.js";
import type { SpendHolds } from "./spend/holds.js";
import type { Sandbox } from "./tools/run.js";
import type { SearchBackend } from "./tools/search.js";
import type { WebFetchOptions } from "./tools/web-fetch.js";

export interface InferenceDeps {
  db: Db;
  /** Writes finished generations and their events, batched. */
  recorder: GenerationRecorder;
  logger: Logger;
  /** Catalog's model resolution: in-process in standalone, over HTTP otherwise. */
  resolve(request: ResolveRequest): Promise<ResolvedModel>;
  /** Identity's spend holds, asked before every attempt. */
  holds: SpendHolds;
  /** Storage's keeper of logged generation content (input/output logging). */
  content: GenerationContentStore;
  /** Media's generations, which `GET /generation` answers for too. */
  mediaGenerations: GenerationFinder;
  /** The workspace's own key for a provider (BYOK), opened by identity for the attempt that uses it. */
  providerKey(workspaceId: string, provider: string): Promise<string | undefined>;
  /** How long a hold lives unsettled: the request deadline plus time for its completion event to arrive. */
  holdTtlMs: number;
  /** Charge a provider's reported usage even past the worst case held for it (`SPEND_CHARGE_BEYOND_HOLD`). */
  chargeBeyondHold: boolean;
  /** Where provider keys are read (`api_key_env` names, `<SLUG>_API_KEY`). */
  env: Record<string, string | undefined>;
  /** Endpoints that failed recently go behind healthy ones; shared by replicas over the bus. */
  cooldowns: EndpointHealth;
  /** Live endpoint statistics, every replica's: routing reads them, attempts feed them. */
  stats: EndpointStats;
  /** The endpoint that served each session lately (sticky routing). */
  sessions: SessionEndpoints;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  maxBodyBytes: number;
  /** Off in standalone, where the router logs every request. */
  requestLogs: boolean;
  /** A deadline shared by every attempt of one request. */
  requestTimeoutMs: number;
  /** Each attempt's first-byte and stream idle timeouts, and how long a failed endpoint rests. */
  timeouts: UpstreamTimeouts;
  /** Runs the shell tools' commands; undefined when no sandbox is configured (those tools are refused). */
  sandbox: Sandbox | undefined;
  /** The operator's web search backend; undefined when none is configured. */
  search: SearchBackend | undefined;
  /** How the web fetch tool reaches pages; undefined when the operator turned it off (WEB_FETCH_ENABLED). */
  webFetch: WebFetchOptions | undefined;
  /** Most model turns one request's server-tool loop may take. */
  maxToolSteps: number;
  /** Answers kept for requests that opt in with `X-OpenRouter-Cache`. */
  responseCache: ResponseCache;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
