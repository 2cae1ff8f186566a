import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { PageProps } from "../app.js";
import { Empty, ErrorNote, Loading } from "../components/ui.js";
import { useLoad } from "../use-load.js";
import type { ModelList } from "./models-catalog.js";
import { Conversation, LastGeneration, type Turn } from "./playground-chat.js";
import { withRecordedCost } from "./playground-record.js";
import { streamChat, type ChatMessage, type GenerationFacts } from "./playground-stream.js";
import "./playground.css";

const preferredModel = "openai/gpt-4o-mini";

export function PlaygroundPage({ call }: PageProps) {
  // GET /models lists text-output models unless asked for others: the ones a chat can use.
  const models = useLoad((signal) => call<ModelList>("/models", { signal }), [call]);
  const modelIds = useMemo(() => (models.data?.data.map((m) => m.id) ?? []).sort((a, b) => a.localeCompare(b)), [models.data]);
  const [model, setModel] = useState("");
  // The inference key lives in this component's state only: never in storage, the URL or the session.
  const [key, setKey] = useState("");
  const [system, setSystem] = useState("");
  const [message, setMessage] = useState("");
  const [turns, setTurns] = useState<Turn[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [facts, setFacts] = useState<GenerationFacts | null>(null);
  const [status, setStatus] = useState("");
  const controller = useRef<AbortController | null>(null);
  const keyInput = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  /** Stops looking up records when the page is left. */
  const [lookups] = useState(() => new AbortController());

  useEffect(() => {
    if (!model && modelIds.length > 0) setModel(modelIds.includes(preferredModel) ? preferredModel : modelIds[0]!);
  }, [modelIds]);
  // Leaving the page stops a stream still running.
  useEffect(
    () => () => {
      const running = controller.current;
      controller.current = null;
      running?.abort();
      lookups.abort();
    },
    [],
  );

  /** Replaces the answer being streamed (the last turn). */
  const updateAnswer = (change: (turn: Turn) => Turn) =>
    setTurns((all) => (all.length > 0 && all[all.length - 1]!.role === "assistant" ? [...all.slice(0, -1), change(all[all.length - 1]!)] : all));

  const send = async (event: Event) => {
    event.preventDefault();
    if (streaming) return;
    if (!key.trim()) {
      keyInput.current?.focus();
      return;
    }
    const text = message.trim();
    if (!model) return setError("Choose a model.");
    if (!text) return setError("Write a message to send.");
    const history: ChatMessage[] = [
      ...(system.trim() ? [{ role: "system" as const, content: system.trim() }] : []),
      ...turns.filter((t) => t.content).map((t) => ({ role: t.role, content: t.content })),
      { role: "user", content: text },
    ];
    const before = turns;
    const abort = new AbortController();
    controller.current = abort;
    setError(null);
    setFacts(null);
    setStreaming(true);
    setStatus("Sending…");
    setTurns([...before, { role: "user", content: text }, { role: "assistant", content: "" }]);
    setMessage("");
    try {
      const result = await streamChat({
        key: key.trim(),
        model,
        messages: history,
        signal: abort.signal,
        onDelta: (delta) => updateAnswer((t) => ({ ...t, content: t.content + delta })),
      });
      // Cleared (or the page left) while streaming: the answer is gone from the screen, and so are its facts.
      if (controller.current !== abort) return;
      setFacts(result);
      // Only while these facts are still the ones shown: Clear or the next message replaces them.
      void withRecordedCost(call, result, lookups.signal).then((recorded) => setFacts((shown) => (shown === result ? recorded : shown)));
      if (result.error) {
        setError(result.error);
        updateAnswer((t) => ({ ...t, note: "The answer failed part way." }));
      }
      if (result.stopped) updateAnswer((t) => ({ ...t, note: "Stopped." }));
      setStatus(result.stopped ? "Stopped." : result.error ? "The answer failed." : "Answer complete.");
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") {
        // Stopped before the gateway answered: no generation id came back to show.
        if (controller.current !== abort) return;
        updateAnswer((t) => ({ ...t, note: "Stopped." }));
        setStatus("Stopped.");
      } else {
        // Refused before an answer: the message goes back to the box to send again once fixed.
        setTurns(before);
        setMessage(text);
        setError(e instanceof Error ? e.message : String(e));
        setStatus("");
      }
    } finally {
      if (controller.current === abort) controller.current = null;
      setStreaming(false);
    }
  };

  const clear = () => {
    // Forgotten before it is stopped, so that the stopped stream's facts do not come back after the clearing.
    const running = controller.current;
    controller.current = null;
    running?.abort();
    setTurns([]);
    setFacts(null);
    setError(null);
    setStatus("");
  };

  return (
    <form ref={form} class="playground" onSubmit={send} aria-label="Playground">
      <div class="playground-side">
        <div class="panel playground-settings">
          <ErrorNote error={models.error} />
          {models.loading && !models.data ? (
            <Loading />
          ) : (
            models.data &&
            (modelIds.length === 0 ? (
              <Empty title="No text models in the catalog">The operator's catalog configuration lists the models the gateway offers.</Empty>
            ) : (
              // The label points at the select rather than wrap it: a wrapping label's text would include every option.
              <div class="field">
                <label class="field-label" for="playground-model">
                  Model
                </label>
                <select id="playground-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                  {modelIds.map((id) => (
                    <option key={id} value={id}>
                      {id}
                    </option>
                  ))}
                </select>
              </div>
            ))
          )}
          <div class="field">
            <label class="field-label" for="playground-key">
              Inference key
            </label>
            <input
              id="playground-key"
              ref={keyInput}
              type="password"
              autoComplete="off"
              spellcheck={false}
              value={key}
              placeholder="sk-sy-v1-…"
              aria-describedby="playground-key-hint"
              onInput={(e) => setKey(e.currentTarget.value)}
            />
            <span class="hint" id="playground-key-hint">
              The playground sends the chat with this key, as an application would: it is billed, limited and logged like every request of that
              key. The key is kept only in this page's memory and forgotten when you leave the page.
            </span>
          </div>
          {!key.trim() && (
            <p class="notice" role="status">
              Enter an inference key: create one on the <a href="#/keys">Keys page</a>.
            </p>
          )}
          <div class="field">
            <label class="field-label" for="playground-system">
              System prompt
            </label>
            <textarea id="playground-system" value={system} rows={4} aria-describedby="playground-system-hint" onInput={(e) => setSystem(e.currentTarget.value)} />
            <span class="hint" id="playground-system-hint">
              Optional; sent first with every turn.
            </span>
          </div>
        </div>
        {facts && <LastGeneration facts={facts} />}
      </div>
      <div class="playground-main">
        <Conversation turns={turns} streaming={streaming} />
        <ErrorNote error={error} />
        <div class="field">
          <label class="field-label" for="playground-message">
            Message
          </label>
          <textarea
            id="playground-message"
            value={message}
            rows={4}
            aria-describedby="playground-message-hint"
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                form.current?.requestSubmit();
              }
            }}
          />
          <span class="hint" id="playground-message-hint">
            Ctrl+Enter (⌘+Enter) sends.
          </span>
        </div>
        <div class="actions">
          <button type="submit" disabled={streaming}>
            Send
          </button>
          {streaming && (
            <button type="button" class="danger" onClick={() => controller.current?.abort()}>
              Stop
            </button>
          )}
          <button type="button" class="quiet" onClick={clear} disabled={turns.length === 0 && !facts && !error}>
            Clear
          </button>
          <span class="hint" role="status">
            {status}
          </span>
        </div>
      </div>
    </form>
  );
}
