import { describe, expect, it } from "vitest";
import { cohereEmbeddings, cohereRerank } from "./cohere.js";
import { googleEmbeddings } from "./google.js";
import { embedders, rerankers } from "./index.js";
import { jinaRerank } from "./jina.js";
import { openAiEmbeddings } from "./openai.js";
import { voyageEmbeddings, voyageRerank } from "./voyage.js";

describe("the adapters by catalog adapter name", () => {
  it("embed with OpenAI's wire for openai and openai-compatible, and each provider's own for the others", () => {
    expect(embedders).toEqual({ openai: openAiEmbeddings, "openai-compatible": openAiEmbeddings, google: googleEmbeddings, cohere: cohereEmbeddings, voyage: voyageEmbeddings });
  });

  it("rerank with Cohere's and Voyage's wires, and Jina's for openai-compatible servers", () => {
    expect(rerankers).toEqual({ cohere: cohereRerank, voyage: voyageRerank, "openai-compatible": jinaRerank });
  });

  it("say what each embeddings wire can carry", () => {
    const flags = Object.fromEntries(Object.entries(embedders).map(([name, e]) => [name, [e.tokens, e.images, e.dimensions]]));
    expect(flags).toEqual({
      openai: [true, false, true],
      "openai-compatible": [true, false, true],
      google: [false, false, true],
      cohere: [false, false, true],
      voyage: [false, false, true],
    });
  });
});
