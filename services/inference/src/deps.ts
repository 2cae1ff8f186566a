import type { ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { CallerVerifier, Db, EventSink, HealthState, Logger, ReadinessCheck } from "@switchyard/runtime";
import type { Cooldowns } from "./routing/attempts.js";


export interface InferenceDeps {
  db: Db;
  events: EventSink;
  logger: Logger;
  /** Catalog's model resolution: in-process in standalone, over HTTP otherwise. */
  resolve(request: ResolveRequest): Promise<ResolvedModel>;
  /** Where provider keys are read (`api_key_env` names, `<SLUG>_API_KEY`). */
  env: Record<string, string | undefined>;
  cooldowns: Cooldowns;
  verifyCaller: CallerVerifier;
  maxBodyBytes: number;
  /** A deadline shared by every attempt of one request. */
  requestTimeoutMs: number;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
