import { ConfigError } from "@switchyard/runtime";
import { defaultCatalogPath, loadCatalog } from "./load.js";

/**
 * Validates a catalog file without starting anything, as a start would read it: prints what it holds, or
 * its problems one per line, and returns the exit code (0 valid, 1 not). No file: the shipped default,
 * read from `defaultPath` (the npm package keeps its copy elsewhere).
 */
export async function checkCatalogFile(path: string | undefined, defaultPath = defaultCatalogPath): Promise<number> {
  try {
    const catalog = await loadCatalog(path ?? defaultPath);
    console.log(`${path ?? "the default catalog"}: ${catalog.providers.length} providers, ${catalog.models.length} models; valid`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return 1;
  }
}
