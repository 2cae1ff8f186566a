import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/**
 * The Overview's charts as a person and a screen reader get them: the figures drawn on the axes (read from
 * the canvas as the chart draws them), the legend, and each chart's text summary.
 */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
let secret: string;

/** Nine models: one more than the spend chart draws apart before it sums the rest into "Other". */
const models = Array.from({ length: 9 }, (_, i) => `chat/m${i + 1}`);

beforeAll(async () => {
  if (browserMissing) return;
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" }],
      models: models.map((id, i) => ({
        id,
        name: id,
        context_length: 8000,
        // 12 prompt and 5 completion tokens, as the fake provider reports them: the first model's cost $0.00000022, the others more.
        endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: `0.0000000${i + 1}`, completion: `0.0000000${2 * (i + 1)}` } }],
      })),
    }),
    { ALPHA_KEY: "alpha-secret" },
  );
  ({ gw, tab } = fixture);
  secret = String((await gw.call("POST", "/keys", { body: { name: "overview" } })).body.key);
  // The y axis labels each chart's canvas was asked to write since it was last cleared whole.
  // The y axis writes its labels right-aligned against the plot; the days below it are centred.
  await tab.page.addInitScript(`{
    const texts = new WeakMap();
    const proto = CanvasRenderingContext2D.prototype;
    const fillText = proto.fillText;
    const clearRect = proto.clearRect;
    proto.fillText = function (text, ...rest) {
      if (this.textAlign === "right") texts.set(this.canvas, [...(texts.get(this.canvas) ?? []), text]);
      return fillText.call(this, text, ...rest);
    };
    proto.clearRect = function (x, y, w, h) {
      if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) texts.set(this.canvas, []);
      return clearRect.call(this, x, y, w, h);
    };
    window.canvasTexts = (canvas) => texts.get(canvas) ?? [];
  }`);
}, 120_000);
afterAll(() => fixture?.stop());

async function chat(model: string) {
  const res = await fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

const today = () => new Date().toISOString().slice(0, 10);
const requestsToday = async () => Number((await gw.call("GET", `/activity/daily?from=${today()}&to=${today()}`)).body.data![0]?.requests ?? 0);
const chart = (title: string) => tab.page.locator("figure.chart", { has: tab.page.locator("figcaption", { hasText: title }) });

/** The y axis labels the chart drew, in the order drawn. */
async function drawn(title: string): Promise<string[]> {
  const canvas = chart(title).locator("canvas");
  await canvas.waitFor();
  return canvas.evaluate((c) => (globalThis as unknown as { canvasTexts: (canvas: unknown) => string[] }).canvasTexts(c));
}

describe.skipIf(browserMissing)("console Overview charts", { timeout: 60_000 }, () => {
  it("counts requests on its axis in whole steps", async () => {
    await chat(models[0]!);
    await eventually(async () => (await requestsToday()) === 1, 10_000);
    await tab.open("overview");
    await expect.poll(() => drawn("Requests per day by model")).toEqual(["0", "1"]);
  });

  it("counts models, not chart series, in the summaries", async () => {
    for (const model of models.slice(1)) await chat(model);
    await eventually(async () => (await requestsToday()) === 9, 10_000);
    await tab.open("overview");
    await chart("Spend per day by model").locator("canvas").waitFor();
    expect(await chart("Spend per day by model").locator("[role=img]").getAttribute("aria-label")).toMatch(/^Spend per day by model: 9 models over 30 days,/);
    expect(await chart("Requests per day by model").locator("[role=img]").getAttribute("aria-label")).toMatch(/^Requests per day by model: 9 models over 30 days,/);
  });

  it("shows a spend below a millionth of a dollar with its digits in the legend", async () => {
    const figure = chart("Spend per day by model");
    // Over today's bar, the legend gives each series' spend that day: "Other" sums the two cheapest models, $0.00000022 and $0.00000044.
    const plot = figure.locator(".u-over");
    const box = (await plot.boundingBox())!;
    await plot.hover({ position: { x: box.width - 2, y: box.height / 2 } });
    const other = figure.locator(".u-legend .u-series", { hasText: "Other" }).locator(".u-value");
    await expect.poll(() => other.textContent()).toBe("$0.00000066");
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
