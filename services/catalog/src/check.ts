import { ConfigError } from "@switchyard/runtime";
import { loadCatalog } from "./operator-config/load.js";

/**
 * `npm run config:check -- <file>`: validates a catalog file without starting anything, as a start would
 * read it. Prints what it holds, or its problems one per line and exits 1. No file: the shipped default.
 */
const path = process.argv[2];
try {
  const catalog = await loadCatalog(path);
  console.log(`${path ?? "the default catalog"}: ${catalog.providers.length} providers, ${catalog.models.length} models; valid`);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
