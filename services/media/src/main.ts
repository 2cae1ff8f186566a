import { exitOnConfigError } from "@switchyard/runtime";
import { runProviderService } from "@switchyard/upstream";
import { loadMediaConfig } from "./config.js";
import { startMedia } from "./start.js";

/** The media service as its own process. */
exitOnConfigError();
const config = loadMediaConfig();
await runProviderService("media", config, (deps) => startMedia({ ...deps, config }));
