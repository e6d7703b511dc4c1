// The note a screen too narrow for the editor shows in its place (issue 36).

import { el } from "./dom";

/** Shown only below a tablet's width (editor.css), where the canvas is not usable: the page
 * says so, and the lesson or puzzle text stays readable (issue 36). */
export function narrowNote(): HTMLElement {
  return el("p", {
    class: "geon-narrow-note",
    role: "note",
    text: "The editor needs a wider screen: at least 700 px, such as a tablet. The lesson or puzzle text stays readable below; open this page on a wider screen to build the graph.",
  });
}
