import type { AnthropicFile, FileProvider, OpenAiFile } from "@switchyard/contracts";
import type { CallerVerifier, Db, EventSink, HealthState, Logger, ObjectStore, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { Owner } from "./files/records.js";
import type { ProviderAccount, ProviderFiles } from "./providers/types.js";

export interface StorageDeps {
  db: Db;
  objects: ObjectStore;
  /** The outbox of `storage.*` events. */
  events: EventSink;
  logger: Logger;
  /** Files APIs of the providers `/files?provider=` can front. */
  providers: Record<FileProvider, ProviderFiles<OpenAiFile | AnthropicFile>>;
  /** The workspace's own key for a provider (BYOK); undefined when it has none or is not the organization's. */
  accountFor(owner: Owner, provider: FileProvider): Promise<ProviderAccount | undefined>;
  /** Whether a workspace is the organization's (identity knows): `workspace_id` may name no other. */
  workspaceInOrganization(workspaceId: string, organizationId: string): Promise<boolean>;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  maxFileBytes: number;
  /** How long a logged generation's content is kept. */
  contentRetentionMs: number;
  /** Off in standalone, where the router logs every request. */
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
