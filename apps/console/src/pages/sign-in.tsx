import { useState } from "preact/hooks";
import { caller, type ApiError } from "../api.js";
import { ErrorNote } from "../components/ui.js";

interface CurrentKey {
  data: { is_management_key: boolean; label: string };
}

export function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: (key: string) => void }) {
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = secret.trim();
    if (!key) return setError("Enter a management key.");
    setBusy(true);
    setError(null);
    try {
      const current = await caller(key, () => {})<CurrentKey>("/key");
      if (!current.data.is_management_key) {
        setError("That is an inference key. The console needs a management key.");
      } else {
        onSignedIn(key);
      }
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Switchyard console</h1>
        <p>Sign in with a management key. It is kept in this browser tab only and forgotten when the tab closes.</p>
        {notice && <p class="notice" role="status">{notice}</p>}
        <label>
          Management key
          <input type="password" name="key" autoComplete="off" spellcheck={false} value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
