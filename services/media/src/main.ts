import { runProviderService } from "@switchyard/upstream";
import { loadMediaConfig } from "./config.js";
import { startMedia } from "./start.js";

/** The media service as its own process. */
const config = loadMediaConfig();
await runProviderService("media", config, (deps) => startMedia({ ...deps, config }));
