import { createLogger, exitOnSignals, exitOnConfigError } from "@switchyard/runtime";
import { loadStandaloneConfig } from "./config.js";
import { startStandalone, type Standalone } from "./start.js";

export interface RunOptions {
  /** The console's built files, when they do not come from the `@switchyard/console` package. */
  consoleDir?: string;
  /** The catalog read when SWITCHYARD_CONFIG is unset, when it is not the catalog package's own file. */
  defaultCatalog?: string;
}

/**
 * The whole gateway in one process, as `npm start` and the npm package's `switchyard` command run it:
 * configuration from the environment, logs to stdout, drained on SIGTERM, catalog reloaded on SIGHUP.
 */
export async function runStandalone(options: RunOptions = {}): Promise<Standalone> {
  exitOnConfigError();
  const loaded = loadStandaloneConfig();
  const config = { ...loaded, SWITCHYARD_CONFIG: loaded.SWITCHYARD_CONFIG ?? options.defaultCatalog };
  // Each service's lines name it; the process's own lines name "standalone".
  const root = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const logger = root.child({ service: "standalone" });
  const standalone = await startStandalone(config, root, { consoleDir: options.consoleDir });
  logger.info({ port: standalone.port, url: `http://${config.HOST}:${standalone.port}/api/v1` }, "Switchyard is listening");
  exitOnSignals(standalone.server, logger);
  process.on("SIGHUP", () => {
    standalone.catalog.reload().catch((error: unknown) => logger.error({ err: error }, "catalog reload failed; the previous catalog stays in place"));
  });
  return standalone;
}
