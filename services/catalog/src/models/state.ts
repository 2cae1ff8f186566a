import type { Logger } from "@switchyard/runtime";
import { loadCatalog } from "../operator-config/load.js";
import { buildSnapshot, type CatalogSnapshot } from "./snapshot.js";

/** The live catalog: one immutable snapshot, swapped whole on reload so readers never see half of one. */
export interface CatalogState {
  current(): CatalogSnapshot;
  /** Re-reads the operator file; a bad file leaves the running catalog in place and throws. */
  reload(): Promise<CatalogSnapshot>;
}

export async function openCatalogState(path: string | undefined, env: Record<string, string | undefined>, logger: Logger): Promise<CatalogState> {
  let snapshot = buildSnapshot(await loadCatalog(path), env);
  const describe = (s: CatalogSnapshot) => ({ providers: s.providers.length, usable: s.providers.filter((p) => p.usable).length, models: s.models.length });
  logger.info(describe(snapshot), "catalog loaded");
  return {
    current: () => snapshot,
    async reload() {
      snapshot = buildSnapshot(await loadCatalog(path), env);
      logger.info(describe(snapshot), "catalog reloaded");
      return snapshot;
    },
  };
}
