export { createApp } from "./app.js";
export { catalogEnv, loadCatalogConfig, type CatalogConfig } from "./config.js";
export { startCatalog, type CatalogStartDeps, type RunningCatalog } from "./start.js";
export { parseCatalog, loadCatalog, defaultCatalogPath } from "./operator-config/load.js";
export { checkCatalogFile } from "./operator-config/check-file.js";
export { catalogConfig, type CatalogConfigInput } from "./operator-config/schema.js";
