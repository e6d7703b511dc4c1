// The diff page (issue 18, "Diffs"; issue 21's history "View"): two versions of a graph, read
// only, drawn with the editor's layout and canvas. Added nodes are ringed green, removed red,
// changed amber (with the word above them); a toggle shows the version before, the version
// after, or both side by side with one pan and zoom (b, a, s). The changes are listed by name.

import "./diff.css";
import type { LoomDocument } from "../model/document";
import { edgePath, type PresenceMark, type Scene } from "../render/canvas";
import { LiveLayout } from "../render/liveLayout";
import { Painter } from "../render/painter";
import { backEdgeRunY, isBackEdge } from "../render/routes";
import { sceneContent } from "../render/scene";
import { bounds, centreOn, fit, toScreen, type Viewport } from "../render/viewport";
import { idle } from "../tools/tools";
import { el } from "../ui/dom";
import { changeRows, edgeChanges, statuses, STATUS_COLORS, type Status, type VersionDiff } from "./model";
import { SharedViewport } from "./sync";

type Mode = "before" | "after" | "side";

/** The least zoom a change in the list is shown at: names and axes read, neighbours in view. */
const FOCUS_SCALE = 0.6;

interface VersionInfo {
  number: number;
  author: string | null;
  message: string;
  summary?: string;
}

async function get<T>(path: string): Promise<T> {
  const answer = await fetch(`/api/v1${path}`, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const json = (await answer.json()) as T & { error?: { message: string } };
  if (!answer.ok) throw new Error(json.error?.message ?? `the server answered ${answer.status}`);
  return json;
}

/** One side: a version's document on its own canvas. */
class Pane {
  readonly canvas = el("canvas", { class: "geon-canvas", tabindex: "0" });
  readonly minimap = el("canvas", { class: "geon-minimap", hidden: "" });
  readonly element: HTMLElement;
  readonly painter: Painter;
  readonly live: LiveLayout;

  constructor(
    readonly title: string,
    readonly doc: LoomDocument,
    private readonly marks: PresenceMark[],
    private readonly page: DiffPage,
  ) {
    this.element = el("section", { class: "geon-diff-pane" }, el("h2", { text: title }), this.canvas, this.minimap);
    this.painter = new Painter(this.canvas, this.minimap, () => this.paint());
    this.live = new LiveLayout(() => page.placed());
    this.live.show(doc);
  }

  scene(): Scene | null {
    const view = this.live.view;
    if (!view) return null;
    const content = sceneContent({ doc: this.doc, view, issues: [], present: [], selected: [], found: [] });
    return { ...content, layout: this.live.layout, vp: this.page.shared.vp, size: this.painter.size(), tool: idle() };
  }

  paint(): void {
    if (this.painter.paint(this.scene(), null)) this.drawMarks();
  }

  /** Each changed node ringed in its status's colour, with the word above, at any zoom; the
   * edges only this version has drawn over the plain ones in the colour of added or removed. */
  private drawMarks(): void {
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    const ratio = window.devicePixelRatio || 1;
    const vp = this.page.shared.vp;
    const own = this.page.edges()?.[this === this.page.before ? "removed" : "added"];
    if (own?.size) {
      ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
      ctx.beginPath();
      const rects = this.live.layout.rects;
      for (const key of own) {
        const [from, to] = key.split("->") as [string, string];
        const a = rects.get(from);
        const b = rects.get(to);
        if (!a || !b) continue;
        edgePath(ctx, a, b, true, isBackEdge(a, b) ? backEdgeRunY(a, b, rects.values()) : undefined);
      }
      ctx.lineWidth = 3 / Math.max(vp.scale, 0.5);
      ctx.strokeStyle = STATUS_COLORS[this === this.page.before ? "removed" : "added"];
      ctx.stroke();
    }
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textBaseline = "bottom";
    for (const mark of this.marks) {
      ctx.strokeStyle = ctx.fillStyle = mark.color;
      ctx.lineWidth = 3;
      for (const id of mark.selection) {
        const rect = this.live.layout.rects.get(id);
        if (!rect) continue;
        const r = toScreen(rect, this.page.shared.vp);
        ctx.beginPath();
        ctx.roundRect(r.x - 5, r.y - 5, r.w + 10, r.h + 10, 8);
        ctx.stroke();
        ctx.fillText(mark.user, r.x - 5, r.y - 7);
      }
    }
  }
}

class DiffPage {
  readonly shared = new SharedViewport({ scale: 1, dx: 0, dy: 0 }, () => this.invalidate());
  mode: Mode = "side";
  private fitted = false;
  readonly before: Pane;
  readonly after: Pane;

  constructor(
    readonly root: HTMLElement,
    readonly diff: VersionDiff,
    docs: [LoomDocument, LoomDocument],
  ) {
    const status = statuses(diff);
    const marks = (keep: Status[]): PresenceMark[] =>
      keep.map((s) => ({ user: s, color: STATUS_COLORS[s], selection: [...status].filter(([, v]) => v === s).map(([id]) => id) }));
    this.before = new Pane(`version ${diff.base}`, docs[0], marks(["removed", "changed"]), this);
    this.after = new Pane(`version ${diff.target}`, docs[1], marks(["added", "changed"]), this);
  }

  /** Centre both canvases on a node (where the version after has it, else the version before),
   * zoomed in far enough to read its name. */
  focus(id: string): void {
    const rect = this.after.live.layout.rects.get(id) ?? this.before.live.layout.rects.get(id);
    if (!rect) return;
    const { width, height } = (this.mode === "before" ? this.before : this.after).painter.size();
    this.shared.set(centreOn({ ...this.shared.vp, scale: Math.max(this.shared.vp.scale, FOCUS_SCALE) }, rect, width, height));
  }

  /** The edges each version has and the other lacks, once both are laid out. */
  edges(): ReturnType<typeof edgeChanges> | null {
    const [a, b] = [this.before.live.view, this.after.live.view];
    return a && b ? edgeChanges(a.edges, b.edges) : null;
  }

  panes(): Pane[] {
    return this.mode === "before" ? [this.before] : this.mode === "after" ? [this.after] : [this.before, this.after];
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    this.root.dataset.mode = mode;
    this.before.element.hidden = mode === "after";
    this.after.element.hidden = mode === "before";
    for (const b of this.root.querySelectorAll<HTMLButtonElement>(".geon-diff-modes button")) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    this.invalidate();
  }

  /** A layout arrived: fit both to the larger picture once, then draw. */
  placed(): void {
    const rects = [...this.before.live.layout.rects.values(), ...this.after.live.layout.rects.values()];
    const complete = [this.before, this.after].every((p) => p.live.view && p.live.layout.rects.size === p.live.view.boxes.length);
    if (!this.fitted && complete && rects.length) {
      const { width, height } = this.after.painter.size();
      this.fitted = true;
      this.shared.set(fit(bounds(rects), width, height));
      return;
    }
    this.invalidate();
  }

  invalidate(): void {
    for (const p of [this.before, this.after]) p.painter.invalidate();
  }

  /** Wheel and drag on either canvas move both (one viewport). */
  bind(pane: Pane): void {
    const canvas = pane.canvas;
    const at = (e: MouseEvent) => {
      const box = canvas.getBoundingClientRect();
      return { x: e.clientX - box.left, y: e.clientY - box.top };
    };
    canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        this.shared.wheel(e.deltaY, at(e));
      },
      { passive: false },
    );
    canvas.addEventListener("pointerdown", (e) => {
      canvas.setPointerCapture(e.pointerId);
      this.shared.press(at(e));
    });
    canvas.addEventListener("pointermove", (e) => this.shared.move(at(e)));
    canvas.addEventListener("pointerup", () => this.shared.release());
  }
}

function picker(label: string, versions: VersionInfo[], chosen: number, go: (n: number) => void): HTMLElement {
  const select = el("select", { "aria-label": label, class: `geon-diff-${label}` });
  for (const v of versions) {
    const said = v.message || v.summary || "";
    select.append(el("option", { value: String(v.number), text: `v${v.number}${said ? ` — ${said.slice(0, 60)}` : ""} (${v.author ?? "someone"})` }));
  }
  select.value = String(chosen);
  select.addEventListener("change", () => go(Number(select.value)));
  return el("label", { class: "small muted" }, `${label} `, select);
}

declare global {
  interface Window {
    geonDiff: { statuses(): Record<string, Status>; edges(): { added: string[]; removed: string[] }; mode(): Mode; viewport(): Viewport; ready(): boolean };
  }
}

async function mount(root: HTMLElement): Promise<void> {
  const graph = root.dataset.graphId ?? "";
  const base = Number(root.dataset.base);
  const target = Number(root.dataset.target);
  const message = el("p", { class: "geon-form-error", role: "alert" });
  root.append(message);
  let page: DiffPage;
  let versions: VersionInfo[];
  try {
    const [diff, a, b, listed] = await Promise.all([
      get<VersionDiff>(`/graphs/${graph}/versions/${base}/diff/${target}`),
      get<{ document: LoomDocument }>(`/graphs/${graph}/versions/${base}`),
      get<{ document: LoomDocument }>(`/graphs/${graph}/versions/${target}`),
      get<{ versions: VersionInfo[] }>(`/graphs/${graph}/versions`),
    ]);
    versions = listed.versions;
    page = new DiffPage(root, diff, [a.document, b.document]);
  } catch (e) {
    message.textContent = e instanceof Error ? e.message : String(e);
    return;
  }
  const go = (a: number, b: number): void => location.assign(`/graphs/${graph}/diff/${a}/${b}/`);
  const modes = el(
    "span",
    { class: "geon-diff-modes", role: "group", "aria-label": "what to show" },
    ...(
      [
        ["before", "Before", "b"],
        ["after", "After", "a"],
        ["side", "Side by side", "s"],
      ] as const
    ).map(([mode, text, key]) => {
      const b = el("button", { type: "button", "data-mode": mode, title: `${text} (${key.toUpperCase()})`, text });
      b.addEventListener("click", () => page.setMode(mode));
      return b;
    }),
  );
  const legend = el(
    "span",
    { class: "geon-diff-legend small" },
    ...(["added", "removed", "changed"] as Status[]).map((s) => el("span", { class: "geon-diff-key" }, el("i", { style: `background:${STATUS_COLORS[s]}` }), s)),
  );
  const rows = changeRows(page.diff, page.before.doc, page.after.doc);
  const list = el(
    "ol",
    { class: "geon-diff-changes", "aria-label": "changes" },
    ...rows.map((r) => {
      const show = el("button", { type: "button", title: `Show ${r.name}` }, el("i", { style: `background:${STATUS_COLORS[r.status]}` }), el("strong", { text: r.name }), ` ${r.status}${r.fields.length ? `: ${r.fields.join(", ")}` : ""}`);
      show.addEventListener("click", () => page.focus(r.id));
      return el("li", { "data-status": r.status }, show);
    }),
  );
  if (!rows.length) list.append(el("li", { class: "muted", text: "No differences: the two versions hold the same document." }));
  root.append(
    el("div", { class: "geon-diff-bar" }, picker("before", versions, base, (n) => go(n, target)), picker("after", versions, target, (n) => go(base, n)), modes, legend, el("a", { href: `/graphs/${graph}/`, text: "Back to the editor" })),
    el("div", { class: "geon-diff-body" }, el("div", { class: "geon-diff-panes" }, page.before.element, page.after.element), el("aside", { class: "geon-diff-side" }, el("h2", { text: `${rows.length} change${rows.length === 1 ? "" : "s"}` }), list)),
  );
  page.bind(page.before);
  page.bind(page.after);
  page.setMode("side");
  document.addEventListener("keydown", (e) => {
    if ((e.target as HTMLElement).closest("select, input")) return;
    const mode = ({ b: "before", a: "after", s: "side" } as Record<string, Mode>)[e.key];
    if (mode) page.setMode(mode);
  });
  window.geonDiff = {
    statuses: () => Object.fromEntries(statuses(page.diff)),
    edges: () => {
      const found = page.edges();
      return { added: [...(found?.added ?? [])], removed: [...(found?.removed ?? [])] };
    },
    mode: () => page.mode,
    viewport: () => ({ ...page.shared.vp }),
    ready: () => [page.before, page.after].every((p) => p.live.view !== null && p.live.layout.rects.size > 0),
  };
}

const root = document.getElementById("geon-diff");
if (root) void mount(root);
