// The editor's toast (issue 35: "toasts close"): one message at a time over the canvas, with a
// close button (×, or Escape while it has focus), and gone by itself after a while long enough to
// read it (``toastMillis``) — kept while the pointer is over it. Closed, it keeps its text (a
// test, or a person scrolling back with a screen reader, can still read what was said); the next
// message replaces it. Its ``role="alert"`` has screen readers say each one.

import { el } from "./dom";

/** How long a message stays: 6 s, and a further 50 ms a character past 60 (a long refusal is
 * read longer), at most 20 s. */
export function toastMillis(message: string): number {
  return Math.min(20_000, 6_000 + Math.max(0, message.length - 60) * 50);
}

export interface Toast {
  element: HTMLElement;
  /** Show ``message`` ("" closes it). */
  show(message: string): void;
  close(): void;
}

export function createToast(): Toast {
  const text = el("span", { class: "geon-toast-text" });
  // the × is drawn by CSS, so the toast's text is the message alone
  const closer = el("button", {
    type: "button",
    class: "geon-toast-close",
    title: "Close this message",
    "aria-label": "close message",
  });
  const element = el("div", { class: "geon-toast", role: "alert" }, text, closer);
  let timer: number | undefined;
  const close = (): void => {
    window.clearTimeout(timer);
    element.dataset.shown = "";
  };
  const later = (): void => {
    window.clearTimeout(timer);
    if (element.dataset.shown === "1")
      timer = window.setTimeout(close, toastMillis(text.textContent ?? ""));
  };
  closer.addEventListener("click", close);
  element.addEventListener("keydown", (e) => {
    if (e.key === "Escape") close();
  });
  element.addEventListener("pointerenter", () => window.clearTimeout(timer));
  element.addEventListener("pointerleave", later);
  return {
    element,
    close,
    show(message) {
      text.textContent = message;
      element.dataset.shown = message ? "1" : "";
      later();
    },
  };
}
