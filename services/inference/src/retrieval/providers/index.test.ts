import { describe, expect, it } from "vitest";
import { cohereEmbeddings, cohereRerank } from "./cohere.js";
import { googleEmbeddings } from "./google.js";
import { embedders, rerankers } from "./index.js";
import { jinaRerank } from "./jina.js";
import { openAiCompatibleEmbeddings, openAiEmbeddings } from "./openai.js";
import { voyageEmbeddings, voyageRerank } from "./voyage.js";

describe("the adapters by catalog adapter name", () => {
  it("embed with OpenAI's wire for openai and openai-compatible (text only there), and each provider's own for the others", () => {
    expect(embedders).toEqual({ openai: openAiEmbeddings, "openai-compatible": openAiCompatibleEmbeddings, google: googleEmbeddings, cohere: cohereEmbeddings, voyage: voyageEmbeddings });
  });

  it("rerank with Cohere's and Voyage's wires, and Jina's for openai-compatible servers", () => {
    expect(rerankers).toEqual({ cohere: cohereRerank, voyage: voyageRerank, "openai-compatible": jinaRerank });
  });

  it("say what each embeddings wire can carry", () => {
    const flags = Object.fromEntries(Object.entries(embedders).map(([name, e]) => [name, [e.tokens, e.images, e.dimensions, e.inputType]]));
    expect(flags).toEqual({
      openai: [true, false, true, false],
      "openai-compatible": [false, false, true, true],
      google: [false, false, true, true],
      cohere: [false, false, true, true],
      voyage: [false, false, true, true],
    });
  });
});
