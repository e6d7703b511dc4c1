// The diff page (issue 18, "Diffs"; issue 21's history "View"): two versions of a graph, read
// only, drawn with the editor's layout and canvas. Added nodes are ringed green, removed red,
// changed amber (with the word above them); a toggle shows the version before, the version
// after, or both side by side with one pan and zoom (b, a, s). The changes are listed by name,
// output and scope, never by id (issue 35); clicking one centres and selects it on both canvases:
// each canvas keeps its own offset (``Pane.shift``) under the one pan and zoom, so the change sits
// at the centre of both even where the two layouts place it apart, and a canvas whose version
// lacks the node centres its neighbour instead (model.ts's ``shownAt``) and says so.

import "./diff.css";
import type { LoomDocument } from "../model/document";
import { edgePath } from "../render/edgePaint";
import type { PresenceMark, Scene } from "../render/scene";
import { LiveLayout } from "../render/liveLayout";
import { Painter } from "../render/painter";
import { backEdgeRunY, isBackEdge } from "../render/routes";
import { sceneContent } from "../render/scene";
import { bounds, centreOn, fit, toScreen, type Viewport } from "../render/viewport";
import { idle } from "../tools/tools";
import { el } from "../ui/dom";
import {
  changeRows,
  edgeChanges,
  shownAt,
  statuses,
  STATUS_COLORS,
  titleIn,
  type Status,
  type VersionDiff,
} from "./model";
import { nodeById, type Point } from "../model/document";
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
  const answer = await fetch(`/api/v1${path}`, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
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
  /** This canvas's offset from the shared pan, in graph units (a change centred on both). */
  shift: Point = { x: 0, y: 0 };
  /** The node a clicked change centres here (the change, or its neighbour), or null. */
  shown: string | null = null;
  /** What this canvas says of the clicked change. */
  readonly where = el("p", { class: "geon-diff-where small", role: "status" });

  constructor(
    readonly title: string,
    readonly doc: LoomDocument,
    private readonly marks: PresenceMark[],
    private readonly page: DiffPage,
  ) {
    this.element = el(
      "section",
      { class: "geon-diff-pane" },
      el("h2", { text: title }),
      this.where,
      this.canvas,
      this.minimap,
    );
    this.painter = new Painter(this.canvas, this.minimap, () => this.paint());
    this.live = new LiveLayout(() => page.placed());
    this.live.show(doc);
  }

  /** The shared pan and zoom with this canvas's own offset. */
  vp(): Viewport {
    const { scale, dx, dy } = this.page.shared.vp;
    return { scale, dx: dx + this.shift.x * scale, dy: dy + this.shift.y * scale };
  }

  scene(): Scene | null {
    const view = this.live.view;
    if (!view) return null;
    const content = sceneContent({
      doc: this.doc,
      view,
      issues: [],
      present: [],
      selected: this.shown ? [this.shown] : [],
      found: [],
    });
    return {
      ...content,
      layout: this.live.layout,
      vp: this.vp(),
      size: this.painter.size(),
      tool: idle(),
    };
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
    const vp = this.vp();
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
        edgePath(
          ctx,
          a,
          b,
          true,
          isBackEdge(a, b) ? backEdgeRunY(a, b, rects.values()) : undefined,
        );
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
        const r = toScreen(rect, vp);
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
      keep.map((s) => ({
        user: s,
        color: STATUS_COLORS[s],
        selection: [...status].filter(([, v]) => v === s).map(([id]) => id),
      }));
    this.before = new Pane(`version ${diff.base}`, docs[0], marks(["removed", "changed"]), this);
    this.after = new Pane(`version ${diff.target}`, docs[1], marks(["added", "changed"]), this);
  }

  /** Centre both canvases on a change, zoomed in far enough to read its name: the canvas of the
   * version shown (the after's, unless only the before is shown or lacks it) by the shared pan,
   * the other by its own offset; each selects the node it centres and says what it shows. */
  focus(id: string, name: string): void {
    const holder = this.after.live.layout.rects.has(id) ? this.after : this.before;
    const edges = holder.live.view?.edges ?? [];
    for (const p of [this.before, this.after]) {
      p.shown = shownAt(id, (n) => p.live.layout.rects.has(n), edges);
      const other = p.shown && p.shown !== id ? titleIn(p.shown, nodeById(p.doc)) : "";
      p.where.textContent =
        p.shown === id
          ? `${name}: here, selected`
          : other
            ? `${name}: not in this version; centred on its neighbour ${other}`
            : `${name}: not in this version`;
    }
    const lead =
      this.mode === "before" && this.before.shown
        ? this.before
        : holder.shown
          ? holder
          : this.before;
    const at = lead.shown ? lead.live.layout.rects.get(lead.shown) : undefined;
    if (!at) return this.invalidate();
    const centre = (r: { x: number; y: number; w: number; h: number }): Point => ({
      x: r.x + r.w / 2,
      y: r.y + r.h / 2,
    });
    lead.shift = { x: 0, y: 0 };
    const follower = lead === this.after ? this.before : this.after;
    // the follower's node (the change, or its neighbour) at the same place on its canvas
    const theirs = follower.shown ? follower.live.layout.rects.get(follower.shown) : undefined;
    follower.shift = theirs
      ? { x: centre(at).x - centre(theirs).x, y: centre(at).y - centre(theirs).y }
      : { x: 0, y: 0 };
    const { width, height } = lead.painter.size();
    this.shared.set(
      centreOn(
        { ...this.shared.vp, scale: Math.max(this.shared.vp.scale, FOCUS_SCALE) },
        at,
        width,
        height,
      ),
    );
  }

  /** Where each canvas shows the clicked change: the node it centres and that node's centre's
   * distance from the canvas's centre, in pixels (tests read it). */
  located(): Record<"before" | "after", { node: string; dx: number; dy: number } | null> {
    const one = (p: Pane) => {
      const rect = p.shown ? p.live.layout.rects.get(p.shown) : undefined;
      if (!p.shown || !rect) return null;
      const r = toScreen(rect, p.vp());
      const { width, height } = p.painter.size();
      return { node: p.shown, dx: r.x + r.w / 2 - width / 2, dy: r.y + r.h / 2 - height / 2 };
    };
    return { before: one(this.before), after: one(this.after) };
  }

  /** The edges each version has and the other lacks, once both are laid out. */
  edges(): ReturnType<typeof edgeChanges> | null {
    const [a, b] = [this.before.live.view, this.after.live.view];
    return a && b ? edgeChanges(a.edges, b.edges) : null;
  }

  panes(): Pane[] {
    return this.mode === "before"
      ? [this.before]
      : this.mode === "after"
        ? [this.after]
        : [this.before, this.after];
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    this.root.dataset.mode = mode;
    this.before.element.hidden = mode === "after";
    this.after.element.hidden = mode === "before";
    for (const b of this.root.querySelectorAll<HTMLButtonElement>(".geon-diff-modes button"))
      b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    this.invalidate();
  }

  /** A layout arrived: fit both to the larger picture once, then draw. */
  placed(): void {
    const rects = [
      ...this.before.live.layout.rects.values(),
      ...this.after.live.layout.rects.values(),
    ];
    const complete = [this.before, this.after].every(
      (p) => p.live.view && p.live.layout.rects.size === p.live.view.boxes.length,
    );
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

function picker(
  label: string,
  versions: VersionInfo[],
  chosen: number,
  go: (n: number) => void,
): HTMLElement {
  const select = el("select", { "aria-label": label, class: `geon-diff-${label}` });
  for (const v of versions) {
    const said = v.message || v.summary || "";
    select.append(
      el("option", {
        value: String(v.number),
        text: `v${v.number}${said ? ` — ${said.slice(0, 60)}` : ""} (${v.author ?? "someone"})`,
      }),
    );
  }
  select.value = String(chosen);
  select.addEventListener("change", () => go(Number(select.value)));
  return el("label", { class: "small muted" }, `${label} `, select);
}

declare global {
  interface Window {
    geonDiff: {
      statuses(): Record<string, Status>;
      edges(): { added: string[]; removed: string[] };
      mode(): Mode;
      viewport(): Viewport;
      ready(): boolean;
      located(): ReturnType<DiffPage["located"]>;
    };
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
      const b = el("button", {
        type: "button",
        "data-mode": mode,
        title: `${text} (${key.toUpperCase()})`,
        text,
      });
      b.addEventListener("click", () => page.setMode(mode));
      return b;
    }),
  );
  const legend = el(
    "span",
    { class: "geon-diff-legend small" },
    ...(["added", "removed", "changed"] as Status[]).map((s) =>
      el(
        "span",
        { class: "geon-diff-key" },
        el("i", { style: `background:${STATUS_COLORS[s]}` }),
        s,
      ),
    ),
  );
  const rows = changeRows(page.diff, page.before.doc, page.after.doc);
  const list = el(
    "ol",
    { class: "geon-diff-changes", "aria-label": "changes" },
    ...rows.map((r) => {
      const show = el(
        "button",
        { type: "button", title: `Show ${r.name}` },
        el("i", { style: `background:${STATUS_COLORS[r.status]}` }),
        el("strong", { text: r.name }),
        ` ${r.status}${r.fields.length ? `: ${r.fields.join(", ")}` : ""}`,
      );
      show.addEventListener("click", () => {
        for (const b of list.querySelectorAll("button[aria-current]"))
          b.removeAttribute("aria-current");
        show.setAttribute("aria-current", "true");
        page.focus(r.id, r.name);
      });
      return el("li", { "data-status": r.status }, show);
    }),
  );
  if (!rows.length)
    list.append(
      el("li", {
        class: "muted",
        text: "No differences: the two versions hold the same document.",
      }),
    );
  root.append(
    el(
      "div",
      { class: "geon-diff-bar" },
      picker("before", versions, base, (n) => go(n, target)),
      picker("after", versions, target, (n) => go(base, n)),
      modes,
      legend,
      el("a", { href: `/graphs/${graph}/`, text: "Back to the editor" }),
    ),
    el(
      "div",
      { class: "geon-diff-body" },
      el("div", { class: "geon-diff-panes" }, page.before.element, page.after.element),
      el(
        "aside",
        { class: "geon-diff-side" },
        el("h2", { text: `${rows.length} change${rows.length === 1 ? "" : "s"}` }),
        list,
      ),
    ),
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
    located: () => page.located(),
    ready: () =>
      [page.before, page.after].every((p) => p.live.view !== null && p.live.layout.rects.size > 0),
  };
}

const root = document.getElementById("geon-diff");
if (root) void mount(root);
