// The Diagram tab: the server's Graphviz drawing of the current version (SVG), panned by dragging
// and zoomed with the wheel, and downloadable as SVG, PNG or DOT. A render the worker has not drawn
// yet answers 202 with a Location: the tab polls it (after Retry-After) until the file comes.

import { button, el } from "./dom";

export const FORMATS = ["svg", "png", "dot"] as const;
export type Format = (typeof FORMATS)[number];

/** GET ``url`` until it answers 200 (202: wait Retry-After seconds, poll the Location). */
export async function fetchRender(
  url: string,
  tries = 120,
  wait = (s: number) => new Promise((r) => setTimeout(r, s * 1000)),
): Promise<Blob> {
  let next = url;
  for (let i = 0; i < tries; i++) {
    const response = await fetch(next, { credentials: "same-origin" });
    if (response.status === 200) return await response.blob();
    const body = (await response.json().catch(() => null)) as {
      location?: string;
      error?: { message?: string };
    } | null;
    if (response.status !== 202)
      throw new Error(body?.error?.message ?? `the server answered ${response.status} for ${next}`);
    next = response.headers.get("Location") ?? body?.location ?? next;
    await wait(Math.min(2, Number(response.headers.get("Retry-After") ?? "1") || 1) / 2);
  }
  throw new Error(`the diagram was not drawn after ${tries} polls; is a worker running?`);
}

export interface Diagram {
  element: HTMLElement;
  /** The toolbar's tab that switches between the canvas and the diagram. */
  tab: HTMLButtonElement;
  /** Show the drawing of ``version`` (fetched once per version). */
  show(version: number): void;
  hide(): void;
  readonly visible: boolean;
}

/** ``current`` says which version the tab shows (null: none loaded yet). */
export function createDiagram(
  graphId: string,
  onError: (message: string) => void,
  current: () => number | null,
): Diagram {
  const url = (fmt: Format, version: number, download = false) =>
    `/api/v1/graphs/${graphId}/render.${fmt}?version=${version}${download ? "&download=1" : ""}`;
  const img = el("img", {
    class: "geon-diagram-img",
    alt: "Graphviz diagram of the graph",
    draggable: "false",
  });
  const stage = el("div", { class: "geon-diagram-stage" }, img);
  const state = el("span", { class: "geon-diagram-state small muted", role: "status" });
  let version = 0;
  let shown = 0;
  let scale = 1;
  let at = { x: 0, y: 0 };
  const place = (): void => {
    img.style.transform = `translate(${at.x}px, ${at.y}px) scale(${scale})`;
  };
  const save = async (fmt: Format): Promise<void> => {
    state.textContent = `preparing ${fmt.toUpperCase()}…`;
    try {
      const blob = await fetchRender(url(fmt, version, true));
      const a = el("a", {
        href: URL.createObjectURL(blob),
        download: `diagram-v${version}.${fmt}`,
      });
      document.body.append(a);
      a.click();
      a.remove();
      state.textContent = "";
    } catch (e) {
      state.textContent = "";
      onError((e as Error).message);
    }
  };
  const downloads = FORMATS.map((fmt) =>
    button(
      fmt.toUpperCase(),
      `Download the diagram as ${fmt.toUpperCase()}`,
      () => void save(fmt),
      `geon-diagram-${fmt}`,
    ),
  );
  const bar = el(
    "div",
    { class: "geon-diagram-bar" },
    el("strong", { text: "Diagram" }),
    state,
    el("span", { class: "geon-diagram-downloads" }, "Download", ...downloads),
  );
  const element = el("div", { class: "geon-diagram", hidden: "" }, bar, stage);
  stage.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = stage.getBoundingClientRect();
    const k = Math.exp(-e.deltaY * 0.0015);
    const next = Math.min(8, Math.max(0.1, scale * k));
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    at = { x: px - ((px - at.x) * next) / scale, y: py - ((py - at.y) * next) / scale };
    scale = next;
    place();
  });
  let drag: { x: number; y: number } | null = null;
  stage.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX - at.x, y: e.clientY - at.y };
    stage.setPointerCapture(e.pointerId);
  });
  stage.addEventListener("pointermove", (e) => {
    if (!drag) return;
    at = { x: e.clientX - drag.x, y: e.clientY - drag.y };
    place();
  });
  stage.addEventListener("pointerup", () => {
    drag = null;
  });
  const load = async (v: number): Promise<void> => {
    state.textContent = `drawing version ${v}…`;
    try {
      const blob = await fetchRender(url("svg", v));
      if (v !== version) return;
      const old = img.src;
      img.src = URL.createObjectURL(blob);
      if (old) URL.revokeObjectURL(old);
      await img.decode().catch(() => undefined);
      // fit the drawing into the stage
      const r = stage.getBoundingClientRect();
      const w = img.naturalWidth || 1;
      const h = img.naturalHeight || 1;
      scale = Math.min(1.5, (r.width - 24) / w, (r.height - 24) / h);
      at = { x: (r.width - w * scale) / 2, y: (r.height - h * scale) / 2 };
      place();
      shown = v;
      element.dataset.version = String(v);
      state.textContent = `version ${v}`;
    } catch (e) {
      state.textContent = "";
      onError((e as Error).message);
    }
  };
  const show = (v: number): void => {
    element.hidden = false;
    version = v;
    if (shown !== v) void load(v);
  };
  const tab = button(
    "Diagram",
    "Show the Graphviz diagram of this version (and download it)",
    () => {
      const v = current();
      if (!element.hidden) element.hidden = true;
      else if (v !== null) show(v);
      tab.classList.toggle("active", !element.hidden);
      tab.textContent = element.hidden ? "Diagram" : "Canvas";
    },
    "geon-diagram-tab",
  );
  return {
    element,
    tab,
    show,
    hide() {
      element.hidden = true;
    },
    get visible() {
      return !element.hidden;
    },
  };
}
