import type { ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import type { CallerVerifier, Db, HealthState, Logger, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { EndpointHealth, EndpointStats, SpendHolds, UpstreamTimeouts } from "@switchyard/upstream";
import type { ReferenceOptions } from "./images/references.js";
import type { MediaRecords } from "./record.js";
import type { ImageProvider, SpeechProvider, TranscriptionProvider } from "./providers/types.js";

export interface MediaDeps {
  db: Db;
  /** Generation records and their `media.*.completed.v1` events, kept until written while the database is away. */
  records: MediaRecords;
  logger: Logger;
  /** Catalog's model resolution: in-process in standalone, over HTTP otherwise. */
  resolve(request: ResolveRequest): Promise<ResolvedModel>;
  /** Identity's spend holds, asked before every attempt. */
  holds: SpendHolds;
  /** The workspace's own key for a provider (BYOK), opened by identity for the attempt that uses it. */
  providerKey(workspaceId: string, provider: string): Promise<string | undefined>;
  holdTtlMs: number;
  /** Charge a provider's reported usage even past the worst case held for it (`SPEND_CHARGE_BEYOND_HOLD`). */
  chargeBeyondHold: boolean;
  /** Where provider keys are read (`api_key_env` names, `<SLUG>_API_KEY`). */
  env: Record<string, string | undefined>;
  /** Endpoints that failed recently go behind healthy ones; shared by replicas over the bus. */
  cooldowns: EndpointHealth;
  /** Live endpoint statistics, every replica's: routing reads them, attempts feed them. */
  stats: EndpointStats;
  /** Wire formats by the catalog's adapter name. */
  transcribers: Readonly<Record<string, TranscriptionProvider>>;
  imagers: Readonly<Record<string, ImageProvider>>;
  speakers: Readonly<Record<string, SpeechProvider>>;
  verifyCaller: CallerVerifier;
  /** Other services' calls of the internal routes (inference finding a generation). */
  verifyService: ServiceVerifier;
  /** Largest JSON body (base64 audio, data URLs). */
  maxBodyBytes: number;
  maxAudioBytes: number;
  references: ReferenceOptions;
  /** One deadline shared by every attempt of a request. */
  requestTimeoutMs: number;
  /** Each attempt's first-byte timeout, and how long a failed endpoint rests. */
  timeouts: UpstreamTimeouts;
  /** Off in standalone, where the router logs every request. */
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
