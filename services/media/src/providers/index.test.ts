import { imageWireFormats } from "@switchyard/upstream";
import { describe, expect, it } from "vitest";
import { imagers } from "./index.js";

describe("image wire formats", () => {
  it("are the table the catalog describes image endpoints from", () => {
    expect(Object.keys(imagers).sort()).toEqual(Object.keys(imageWireFormats).sort());
    for (const [adapter, provider] of Object.entries(imagers)) {
      const { generate: _generate, stream, ...capabilities } = provider;
      expect(capabilities, adapter).toEqual(imageWireFormats[adapter]);
      expect(Boolean(stream), adapter).toBe(provider.streams);
    }
  });
});
