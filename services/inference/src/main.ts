import { runProviderService } from "@switchyard/upstream";
import { loadInferenceConfig } from "./config.js";
import { startInference } from "./start.js";

/** The inference service as its own process. */
const config = loadInferenceConfig();
await runProviderService("inference", config, (deps) => startInference({ ...deps, config }));
