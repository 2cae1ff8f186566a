import { createLogger, exitOnSignals, exitOnConfigError } from "@switchyard/runtime";
import { loadStandaloneConfig } from "./config.js";
import { startStandalone } from "./start.js";

/** `npm start`: the whole gateway in one process. */
exitOnConfigError();
const config = loadStandaloneConfig();
// Each service's lines name it; the process's own lines name "standalone".
const root = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const logger = root.child({ service: "standalone" });
const standalone = await startStandalone(config, root);
logger.info({ port: standalone.port, url: `http://${config.HOST}:${standalone.port}/api/v1` }, "Switchyard is listening");
exitOnSignals(standalone.server, logger);
process.on("SIGHUP", () => {
  standalone.catalog.reload().catch((error: unknown) => logger.error({ err: error }, "catalog reload failed; the previous catalog stays in place"));
});
