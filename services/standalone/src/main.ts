import { createLogger, exitOnSignals } from "@switchyard/runtime";
import { loadStandaloneConfig } from "./config.js";
import { startStandalone } from "./start.js";

/** `npm start`: the whole gateway in one process. */
const config = loadStandaloneConfig();
const logger = createLogger({ service: "switchyard", level: config.LOG_LEVEL });
const standalone = await startStandalone(config, logger);
logger.info({ port: standalone.port, url: `http://${config.HOST}:${standalone.port}/api/v1` }, "Switchyard is listening");
exitOnSignals(standalone.server, logger);
process.on("SIGHUP", () => {
  standalone.catalog.reload().catch((error: unknown) => logger.error({ err: error }, "catalog reload failed; the previous catalog stays in place"));
});
