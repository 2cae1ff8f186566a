import { describe, expect, it } from "vitest";
import { decodeEntities, htmlToText } from "./html-text.js";

describe("htmlToText", () => {
  it("keeps what a reader sees: the title, the text, in lines by block", () => {
    const page = `<!DOCTYPE html>
      <html><head><title> Switchyard &amp; tools </title><meta charset="utf-8">
        <style>body { color: red }</style><script>var secret = "<p>not text</p>";</script></head>
      <body>
        <nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
        <h1>Server   tools</h1>
        <p>The gateway
           runs <b>web fetch</b>&nbsp;itself.<br>Second line.</p>
        <!-- a comment <p>hidden</p> -->
        <ul><li>one</li><li>two &lt;b&gt;</li></ul>
        <noscript>Enable scripts</noscript>
        <table><tr><td>a</td><td>b</td></tr></table>
        <svg><text>drawing</text></svg>
      </body></html>`;
    const { title, text } = htmlToText(page);
    expect(title).toBe("Switchyard & tools");
    expect(text).toBe("Home | Docs\n\nServer tools\n\nThe gateway runs web fetch itself.\nSecond line.\n\n- one\n- two <b>\n\na b");
  });

  it("keeps preformatted text's lines and indentation", () => {
    const { text } = htmlToText("<p>Run:</p><pre><code>npm ci\n  npm run build &amp;&amp; echo ok</code></pre><p>Done.</p>");
    expect(text).toBe("Run:\n\nnpm ci\n  npm run build && echo ok\n\nDone.");
  });

  it("drops a script left open and markup without a title", () => {
    expect(htmlToText("<div>Visible</div><script>document.write('<p>x</p>')")).toEqual({ title: undefined, text: "Visible" });
  });

  it("leaves a lone < in text alone", () => {
    expect(htmlToText("<p>1 < 2 and 3 > 2</p>").text).toBe("1 < 2 and 3 > 2");
  });
});

describe("decodeEntities", () => {
  it("decodes named and numeric references once", () => {
    expect(decodeEntities("&amp;lt; &#65;&#x42; &eacute;t&eacute; &Eacute; &yuml; &iexcl; &copy; &bogus; &#0; &#x110000;")).toBe("&lt; AB été É ÿ ¡ © &bogus; \uFFFD \uFFFD");
    expect(decodeEntities("&#x1F600;")).toBe("😀");
  });
});

describe("htmlToText on hostile pages", () => {
  // Tags, declarations and elements that are opened and never closed: each regex that looked for the end
  // from every `<` rescanned the rest of the page, so time grew with the square of its size.
  const size = 2 * 1024 * 1024;
  const kinds = ["<a", "<!", "<?", "<br", "</p", "<p", "<li", "<td", "<div", "<title>", "<title", "<script", "<script>", "<pre", "<pre>", "<!--", "<a <br <!x <?y "];

  it.each(kinds)("turns a 2 MB page of %j into text in about linear time", (unit) => {
    const page = `<p>Start</p>${unit.repeat(Math.ceil(size / unit.length))}`;
    const started = performance.now();
    const { text } = htmlToText(page);
    const elapsed = performance.now() - started;
    expect(text.startsWith("Start")).toBe(true);
    // Well under a second on a quiet machine; the bound leaves room for a busy one.
    expect(elapsed).toBeLessThan(2000);
  });

  it("reads tags left open as before: text when no > follows, up to the next > otherwise", () => {
    expect(htmlToText("<p>Hi</p><a<a").text).toBe("Hi\n\n<a<a");
    expect(htmlToText("<p>Hi <br</p>").text).toBe("Hi");
    expect(htmlToText("<title>T</title><p>a<!b<?c")).toEqual({ title: "T", text: "a<!b<?c" });
    expect(htmlToText("<title>Open<p>body")).toEqual({ title: undefined, text: "" });
  });
});
