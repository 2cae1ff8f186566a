import { catalogEnv } from "@switchyard/catalog";
import { identityEnv } from "@switchyard/identity";
import { inferenceEnv } from "@switchyard/inference";
import { mediaEnv } from "@switchyard/media";
import { sandboxEnv } from "@switchyard/sandbox";
import { storageEnv } from "@switchyard/storage";
import { parseEnv } from "@switchyard/runtime";
import { routerEnv } from "@switchyard/router";
import type { z } from "zod";

/** Standalone understands every service's variables; PORT is the one public port. */
export const standaloneEnv = routerEnv.extend(identityEnv.omit({ PORT: true }).shape).extend(catalogEnv.omit({ PORT: true, INFERENCE_URL: true, MEDIA_URL: true }).shape)
  .extend(inferenceEnv.omit({ PORT: true }).shape)
  .extend(mediaEnv.omit({ PORT: true }).shape)
  .extend(storageEnv.omit({ PORT: true }).shape)
  .extend(sandboxEnv.omit({ PORT: true, STORAGE_URL: true }).shape);
export type StandaloneConfig = z.infer<typeof standaloneEnv>;

export type StandaloneConfigWithProviders = StandaloneConfig & { providerEnv: Record<string, string | undefined> };

/** Provider keys and base URLs are read from the same environment (`<SLUG>_API_KEY`, `<SLUG>_BASE_URL`). */
export function loadStandaloneConfig(env: Record<string, string | undefined> = process.env): StandaloneConfigWithProviders {
  return { ...parseEnv(standaloneEnv, env), providerEnv: env };
}
