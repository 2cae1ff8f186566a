import { describe, expect, it } from "vitest";
import { z } from "zod";
import { commonEnv, ConfigError, parseEnv, port } from "./config.js";

describe("parseEnv", () => {
  const schema = z.object({ ...commonEnv, PORT: port(8080) });

  it("applies defaults and treats empty values as unset", () => {
    const config = parseEnv(schema, { DATABASE_URL: "  " });
    expect(config.PORT).toBe(8080);
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.LOG_LEVEL).toBe("info");
  });

  it("fails with one readable line per bad variable", () => {
    const attempt = () => parseEnv(schema, { PORT: "eighty", LOG_LEVEL: "loud", SWITCHYARD_INTERNAL_SECRET: "short" });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/PORT:/);
      expect(message).toMatch(/LOG_LEVEL:/);
      expect(message).toMatch(/SWITCHYARD_INTERNAL_SECRET: must be at least 32 characters/);
    }
  });
});
