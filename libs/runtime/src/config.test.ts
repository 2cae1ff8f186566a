import { describe, expect, it } from "vitest";
import { z } from "zod";
import { commonEnv, ConfigError, envFlag, parseEnv, port } from "./config.js";

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

describe("envFlag", () => {
  const schema = z.object({ OFF: envFlag(false), ON: envFlag(true) });

  it("reads true/1 and false/0, and defaults when unset", () => {
    expect(parseEnv(schema, {})).toEqual({ OFF: false, ON: true });
    expect(parseEnv(schema, { OFF: "1", ON: "0" })).toEqual({ OFF: true, ON: false });
    expect(parseEnv(schema, { OFF: "true", ON: "false" })).toEqual({ OFF: true, ON: false });
  });

  it("refuses anything else at start", () => {
    expect(() => parseEnv(schema, { OFF: "yes" })).toThrow(/OFF:/);
  });
});

describe("OTLP header variables", () => {
  const env = z.object(commonEnv);
  it("read percent-encoded name=value pairs, and refuse a bad escape as a problem of the variable", () => {
    expect(parseEnv(env, { OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-team = a=b" }).OTEL_EXPORTER_OTLP_HEADERS).toEqual({ authorization: "Bearer abc", "x-team": "a=b" });
    expect(() => parseEnv(env, { OTEL_EXPORTER_OTLP_HEADERS: "Authorization=100%" })).toThrow(ConfigError);
    expect(() => parseEnv(env, { OTEL_EXPORTER_OTLP_HEADERS: "Authorization=100%" })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
  });
});
