import { identityEnv } from "@switchyard/identity";
import { parseEnv } from "@switchyard/runtime";
import { routerEnv } from "@switchyard/router";
import type { z } from "zod";

/** Standalone understands every service's variables; PORT is the one public port. */
export const standaloneEnv = routerEnv.extend(identityEnv.omit({ PORT: true }).shape);
export type StandaloneConfig = z.infer<typeof standaloneEnv>;

export const loadStandaloneConfig = (env?: Record<string, string | undefined>) => parseEnv(standaloneEnv, env);
