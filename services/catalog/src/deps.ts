import type { CallerVerifier, Db, EventSink, HealthState, Logger, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { GuardrailCache } from "./guardrails/service.js";
import type { EndpointStatsLookup } from "./models/endpoint-stats.js";
import type { CatalogState } from "./models/state.js";
import type { IdentityLookup } from "./policy/identity-lookup.js";

export interface CatalogDeps {
  db: Db;
  events: EventSink;
  identity: IdentityLookup;
  catalog: CatalogState;
  guardrails: GuardrailCache;
  /** Live endpoint figures for the endpoint listings. */
  endpointStats: EndpointStatsLookup;
  logger: Logger;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  maxBodyBytes: number;
  /** Off in standalone, where the router logs every request. */
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
