// Markdown of graph descriptions, rendered safely: markdown-it with raw HTML off (a tag in the
// text is shown as text), no images (a remote picture would be fetched from the reader's
// browser; the site's CSP refuses it anyway), links only to http(s), mailto and relative
// addresses (markdown-it's own check already refuses javascript:, vbscript:, file: and data:),
// opened in a new tab without a referrer. The result is HTML to set as innerHTML.

import MarkdownIt from "markdown-it";

const SAFE_LINK = /^(https?:|mailto:|[/#?.]|[^:]*$)/i;

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.disable("image");
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

/** A description (Markdown) as block HTML: paragraphs, lists, emphasis, code, links. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** One paragraph of Markdown as inline HTML (no <p>), e.g. a summary in a list. */
export function renderMarkdownInline(text: string): string {
  return md.renderInline(text);
}
