// Small DOM helpers for the panels.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

export function button(
  label: string,
  title: string,
  onClick: () => void,
  cls = "",
): HTMLButtonElement {
  const b = el("button", { type: "button", title, class: cls, text: label });
  b.addEventListener("click", onClick);
  return b;
}

/** The button that submits its form (so Enter in any field of the form submits it too). */
export function submit(label: string, title: string, cls = "primary"): HTMLButtonElement {
  return el("button", { type: "submit", title, class: cls, text: label });
}
