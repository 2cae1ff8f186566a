export { startStandalone, type Standalone, type StandaloneOptions } from "./start.js";
export { standaloneEnv, loadStandaloneConfig, type StandaloneConfig } from "./config.js";
export { runStandalone, type RunOptions } from "./run.js";
