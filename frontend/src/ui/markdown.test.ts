import { describe, expect, it } from "vitest";
import { renderMarkdown, renderMarkdownInline } from "./markdown";

describe("renderMarkdown", () => {
  it.each([
    [
      "emphasis and a list",
      "A *wide* layer:\n\n- one\n- two",
      "<p>A <em>wide</em> layer:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n",
    ],
    [
      "raw HTML is text",
      'x <script>alert(1)</script> <img src=x onerror="y">',
      "<p>x &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;y&quot;&gt;</p>\n",
    ],
    [
      "a javascript: link is not a link",
      "[go](javascript:alert(1))",
      "<p>[go](javascript:alert(1))</p>\n",
    ],
    ["a data: link is not a link", "[go](data:text/html,hi)", "<p>[go](data:text/html,hi)</p>\n"],
    [
      "an image is a link, never fetched",
      "![cat](https://example.com/cat.png)",
      '<p>!<a href="https://example.com/cat.png" target="_blank" rel="noopener noreferrer">cat</a></p>\n',
    ],
    [
      "an https link opens in a new tab",
      "[paper](https://arxiv.org/abs/1)",
      '<p><a href="https://arxiv.org/abs/1" target="_blank" rel="noopener noreferrer">paper</a></p>\n',
    ],
    ["code keeps its text", "`a<b`", "<p><code>a&lt;b</code></p>\n"],
  ])("%s", (_label, text, html) => {
    expect(renderMarkdown(text)).toBe(html);
  });

  it("renders one paragraph inline, without <p>", () => {
    expect(renderMarkdownInline("Two **dense** layers")).toBe("Two <strong>dense</strong> layers");
  });
});
