export { startStandalone, type Standalone } from "./start.js";
export { standaloneEnv, loadStandaloneConfig, type StandaloneConfig } from "./config.js";
