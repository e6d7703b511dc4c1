// Entry point of the editor shell: mounts the editor into #geon-editor and exposes a test API as
// ``window.geon`` so browser tests can drive and read the editor without scraping pixels.

import "./ui/editor.css";
import { ACTIONS } from "./actions/actions";
import { Editor } from "./editor";
import { mountAbout } from "./ui/about";
import { mountTrainingStep } from "./ui/trainingStep";
import { EDITOR_TOUR, createHelp, createTour } from "./ui/help";
import { mountHistory } from "./ui/history";
import { createStepper } from "./teach/stepper";
import { mountLesson } from "./ui/lesson";
import { createLessonWriter } from "./ui/lessonWriter";
import { mountPuzzle, type Puzzle } from "./ui/puzzle";
import { loadCounterexample } from "./teach/loadRun";
import { mountTryout, type TriedWork } from "./teach/tryout";
import { issuesByNode, tensorAxes, type LoomDocument } from "./model/document";
import type { EditOp } from "./model/edits";
import type { ReviewSummary } from "./model/reviews";
import type { EditorState } from "./model/state";
import { COLORS, axisColor } from "./render/colors";
import { toScreen, type Viewport } from "./render/viewport";

export interface GeonTestApi {
  /** A copy of the editor state (document as shown, version, issues, presence, run). */
  state(): EditorState & {
    selected: string[];
    inFlight: number;
    history: { undo: string[]; redo: string[] };
    tool: string;
    viewport: Viewport;
  };
  /** How many times the canvas has been painted. */
  draws(): number;
  /** Each drawn box in canvas CSS pixels. */
  boxes(): DrawnBox[];
  /** The edges drawn with the current plan's collectives ("tensor->operation"), and their labels. */
  edgeLabels(): { edge: string; text: string; width: number; bytes: number }[];
  colors: typeof COLORS;
  axisColor(axis: string): string;
  /** The id of the node with this label (null when none). */
  nodeId(label: string): string | null;
  /** The TensorAxes of the tensor with this label. */
  axesOf(label: string): string[] | null;
  select(ids: string[]): void;
  run(action: string): void;
  /** One user action made of these ops, as the UI makes them (shown, queued, sent, undoable); the refusal message or null. */
  edit(name: string, ops: EditOp[]): string | null;
  setViewport(vp: Viewport): void;
  /** Paint now; returns the milliseconds it took. */
  paint(): number;
  loadDocument(doc: LoomDocument): void;
  /** The reviews the Reviews panel lists (newest first), as the server and live events last said. */
  reviews(): ReviewSummary[];
  /** Every box in graph coordinates, and the edges as [from, to] (what the benchmark's floor draws). */
  scene(): {
    rects: { id: string; x: number; y: number; w: number; h: number }[];
    edges: [string, string][];
  };
}

export interface DrawnBox {
  id: string;
  kind: string;
  title: string;
  chips: string[];
  issues: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Each box the editor draws, where it is on the canvas, with its issue count. */
function drawnBoxes(editor: Editor): DrawnBox[] {
  if (!editor.view) return [];
  const byNode = issuesByNode(editor.sync.issues());
  return editor.view.boxes.flatMap((b) => {
    const r = editor.layout.rects.get(b.id);
    return r
      ? [
          {
            id: b.id,
            kind: b.kind,
            title: b.title,
            chips: b.chips.map((c) => c.ref),
            issues: byNode.get(b.id)?.length ?? 0,
            ...toScreen(r, editor.vp),
          },
        ]
      : [];
  });
}

declare global {
  interface Window {
    geon: GeonTestApi;
  }
}

function mount(root: HTMLElement): void {
  const csrf =
    document.querySelector<HTMLInputElement>("input[name=csrfmiddlewaretoken]")?.value ?? "";
  const editor = new Editor(root, {
    wsPath: root.dataset.wsPath ?? "",
    csrf,
    user: root.dataset.user ?? "",
    graphId: root.dataset.graphId ?? "",
    offline: root.dataset.offline === "1",
  });
  // a try page (no account): the browser keeps the work, the server checks it
  const tryout = mountTryout(
    root,
    {
      document: () => editor.sync.session.document,
      load: (doc) => editor.loadDocument(doc),
      showIssues: (issues) => editor.sync.showIssues(issues),
      onChange: (listener) => (editor.extras.changed = listener),
    },
    csrf,
  );
  const tried: TriedWork | undefined = tryout
    ? { key: tryout.key, document: () => editor.sync.session.document }
    : undefined;
  mountAbout(root, csrf);
  if (!tryout) {
    mountTrainingStep(root, csrf, {
      groupPaths: () => new Set(editor.live.tree?.groups.keys() ?? []),
      collapsed: () => editor.live.collapsed,
      setCollapsed: (next) => editor.groups.set(next),
    });
  }
  const history = mountHistory(root, csrf);
  const tour = createTour(EDITOR_TOUR);
  const help = createHelp(ACTIONS, () => tour.start());
  if (!tryout) editor.extras.history = () => void history.open();
  editor.extras.help = () => help.open();
  // "Explain step by step" (the operation's right-click menu); ?explain=<id> reopens it
  const explain = (id: string): void => {
    const doc = editor.sync.session.document;
    if (!doc) return;
    const url = new URL(location.href);
    url.searchParams.set("explain", id);
    window.history.replaceState(null, "", url);
    createStepper(doc, id, () => {
      url.searchParams.delete("explain");
      window.history.replaceState(null, "", url);
    }).show();
  };
  editor.extras.explain = explain;
  /** Run ``then`` with the document once the snapshot brought it (tried for up to 10 s). */
  const withDocument = (then: (doc: LoomDocument) => void, tries = 50): void => {
    const doc = editor.sync.session.document;
    if (doc) then(doc);
    else if (tries > 0) setTimeout(() => withDocument(then, tries - 1), 200);
  };
  const asked = new URLSearchParams(location.search).get("explain");
  if (asked) withDocument(() => explain(asked));
  // until the tour was seen in this browser, the toolbar's help button offers it
  const helpButton = root.querySelector<HTMLButtonElement>(".geon-act-help");
  if (helpButton && !tour.seen()) {
    const title = helpButton.title;
    helpButton.classList.add("geon-tour-new");
    helpButton.title = "New here? A 1-minute tour of the editor (then ? shows every shortcut)";
    helpButton.addEventListener(
      "click",
      (e) => {
        e.stopImmediatePropagation();
        helpButton.title = title;
        helpButton.classList.remove("geon-tour-new");
        tour.start();
      },
      { once: true, capture: true },
    );
  }
  // a lesson's step selects its nodes once the document is there
  const selectLabels = (labels: string[]): void =>
    withDocument((doc) =>
      editor.setSelection(
        doc.nodes.filter((n) => n.label !== undefined && labels.includes(n.label)).map((n) => n.id),
      ),
    );
  const graphId = root.dataset.graphId ?? "";
  // an editor of the graph may write a lesson on it
  if (root.dataset.canEdit === "1" && graphId) {
    const selectedLabels = () =>
      (editor.sync.session.document?.nodes ?? [])
        .filter((n) => editor.selected.includes(n.id) && n.label)
        .map((n) => n.label!);
    root.querySelector(".geon-left")?.append(createLessonWriter({ graphId, csrf, selectedLabels }));
  }
  void mountLesson({
    graphId,
    csrf,
    select: selectLabels,
    tryout: tryout?.kind === "lesson" ? tried : undefined,
  });
  // inside a puzzle: the warnings it asks for (its own pattern) are not drawn as mistakes, and
  // the operation picker lists its allowed kernels first
  const opened = (puzzle: Puzzle): void => {
    editor.sync.quiet = new Set(puzzle.quietConstraints ?? []);
    editor.preferKernels(puzzle.allowedKernels);
    editor.refresh();
  };
  void mountPuzzle({
    graphId,
    csrf,
    tryout: tryout?.kind === "puzzle" ? tried : undefined,
    opened,
    loadRun: (c, dtypes) => loadCounterexample(editor, c, dtypes),
  });
  const byLabel = (label: string) =>
    editor.sync.session.document?.nodes.find((n) => n.label === label);
  window.geon = {
    state: () =>
      structuredClone({
        ...editor.state(),
        selected: editor.selected,
        inFlight: editor.sync.session.inFlight,
        history: editor.sync.history.names(),
        tool: editor.tool.kind,
        viewport: editor.vp,
      }),
    draws: () => editor.draws,
    boxes: () => drawnBoxes(editor),
    edgeLabels: () => [...editor.collectives].map(([edge, label]) => ({ edge, ...label })),
    colors: COLORS,
    axisColor: (axis) => axisColor(axis, editor.scene()?.axisOrder ?? []),
    nodeId: (label) => byLabel(label)?.id ?? null,
    axesOf: (label) => tensorAxes(byLabel(label)),
    select: (ids) => editor.setSelection(ids),
    run: (action) => editor.runAction(action),
    edit: (name, ops) => editor.perform(name, () => structuredClone(ops)),
    setViewport: (vp) => {
      editor.vp = vp;
      editor.invalidate();
    },
    paint: () => {
      editor.paint();
      return editor.lastPaintMs;
    },
    loadDocument: (doc) => editor.loadDocument(doc),
    reviews: () => structuredClone(editor.reviews?.reviews() ?? []),
    scene: () => ({
      rects: [...editor.layout.rects].map(([id, r]) => ({ id, ...r })),
      edges: (editor.view?.edges ?? []).map((e) => [e.from, e.to] as [string, string]),
    }),
  };
}

const root = document.getElementById("geon-editor");
if (root) mount(root);
