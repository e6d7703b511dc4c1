// The editor's panels (editor.ts): the toolbar, the axes panel and inspector on the left, the
// reviews, shards, issues and run panels on the right, the projection window, the diagram and the
// add dialogs. Each is built with its callbacks into the editor, laid out around the canvas, and
// updated from the editor's state after a change (never on a pan or zoom).

import { addOperationAction, addTensorAction } from "./actions/edits";
import { declareAxis, editAxis, removeAxis } from "./model/authorAxes";
import { castAxesFix } from "./model/fixes";
import { axesWithIssues, planWhyIssues } from "./model/issues";
import { editOperation, editProjection, editTensor } from "./model/nodeEdits";
import { permalinkTarget, type Role } from "./model/reviews";
import type { Editor } from "./editor";
import { focusEdge, namedStages } from "./render/marks";
import { personColor } from "./render/scene";
import { edgeLabels } from "./ui/costs";
import { createDiagram } from "./ui/diagram";
import { el } from "./ui/dom";
import { createAxesPanel } from "./ui/axesPanel";
import { createInspector } from "./ui/inspector";
import { createIssuesPanel } from "./ui/issuesPanel";
import { createPalette, createTensorDialog } from "./ui/addDialogs";
import { narrowNote } from "./ui/narrowNote";
import { createProjectionWindow } from "./ui/projection";
import { markReadOnly } from "./ui/readOnly";
import { createReviewsPanel, showHeld, type ReviewsPanel } from "./ui/reviews";
import { createRunPanel } from "./ui/runPanel";
import { createShardsPanel } from "./ui/shards";
import { shownWindow } from "./ui/shownWindow";
import { createToolbar } from "./ui/toolbar";

export type EditorPanels = ReturnType<typeof createEditorPanels>;

/** Build the panels around the canvas and the minimap, and put them all in the editor's root. */
export function createEditorPanels(
  editor: Editor,
  canvas: HTMLCanvasElement,
  minimap: HTMLCanvasElement,
) {
  const { root, options } = editor;
  const toolbar = createToolbar(
    (name) => editor.runAction(name),
    () => void editor.sync.requestRun(options.graphId ?? "", options.csrf),
    (text, next) => editor.search(text, next),
    () => editor.sync.retryNow(),
  );
  const axesPanel = createAxesPanel({
    declare: (form) => editor.perform(`declare axis ${form.name}`, (doc) => declareAxis(doc, form)),
    edit: (id, form) => editor.perform(`edit axis ${form.name}`, (doc) => editAxis(doc, id, form)),
    remove: (id) => editor.perform("delete axis", (doc) => removeAxis(doc, id)),
  });
  const inspector = createInspector({
    applyTensor: (id, label, axes, dtype) =>
      editor.perform("edit tensor", (doc) => editTensor(doc, id, label, axes, dtype)),
    applyOperation: (id, label, params) =>
      editor.perform("edit operation", (doc) => editOperation(doc, id, label, params)),
    openProjection: (id) => editor.openProjection(id),
  });
  const issuesPanel = createIssuesPanel(
    (id) => editor.jumpTo(id),
    (issue) =>
      void editor.perform("insert cast_axes", (doc) => {
        const fix = castAxesFix(doc, issue);
        return { ops: fix.ops, select: [fix.castId] };
      }),
  );
  const shardsPanel = createShardsPanel({
    shard: (request) => editor.sync.shard(request),
    removeApplication: (id) =>
      void editor.perform("remove application", () => [{ op: "remove_node", id }]),
    select: (id) => editor.setSelection([id]),
    plans:
      options.graphId && !options.offline
        ? {
            graphId: options.graphId,
            csrf: options.csrf,
            // the server generates the plan (REST); its applied, with this id, is one undo step
            beginSwitch: (name) => {
              const editId = editor.sync.expectExpanded("plan", `switch to plan ${name}`);
              return editId === null
                ? "the graph has not loaded yet"
                : { editId, baseVersion: editor.sync.session.version! };
            },
            cancelSwitch: (editId) => editor.sync.cancelExpanded(editId),
            readOnly: () => editor.sync.readOnly(),
            showEdge: (tensor, consumer) =>
              showHeld(
                editor.sync.session.document,
                [tensor, consumer],
                (held) => focusEdge(editor, held),
                (m) => editor.flash(m),
              ),
            onCollectives: (_plan, collectives, saved) => {
              editor.collectives = edgeLabels(collectives);
              issuesPanel.explain(planWhyIssues(editor.sync.session.document, saved, collectives));
              editor.live.marks.stages = namedStages(saved);
              editor.cached = null;
              editor.invalidate();
            },
          }
        : undefined,
  });
  const projection = createProjectionWindow({
    commit: (opId, drafts) =>
      editor.perform("edit projection", (doc) => editProjection(doc, opId, drafts)),
  });
  const palette = createPalette(
    (kernel) => void editor.perform(`add ${kernel}`, addOperationAction(kernel, editor.seen())),
  );
  const tensorDialog = createTensorDialog((label, axes, dtype) =>
    editor.perform(`add tensor ${label}`, addTensorAction({ label, axes, dtype }, editor.seen())),
  );
  const runPanel = createRunPanel({
    graphId: options.graphId ?? "",
    csrf: options.csrf,
    onRun: (run) => editor.sync.runQueued(run),
    onError: (message) => editor.flash(message),
  });
  const diagram = createDiagram(
    options.graphId ?? "",
    (message) => editor.flash(message),
    () => editor.sync.session.version,
  );
  toolbar.element.querySelector(".geon-act-zoomToFit")?.after(diagram.tab);
  const stage = el(
    "div",
    { class: "geon-stage" },
    canvas,
    minimap,
    editor.groups.bar,
    projection.element,
    editor.toast.element,
    diagram.element,
  );
  const left = el("aside", { class: "geon-side geon-left" }, axesPanel.element, inspector.element);
  let reviews: ReviewsPanel | null = null;
  if (options.graphId && !options.offline) {
    reviews = createReviewsPanel({
      graphId: options.graphId,
      csrf: options.csrf,
      ...permalinkTarget(window.location.search),
      role: () => editor.sync.state().role as Role | null,
      doc: () => editor.sync.session.document,
      version: () => editor.sync.session.version,
      selected: () => editor.selected,
      window: () =>
        shownWindow(
          editor.sync.session.document,
          projection.visible,
          editor.projectionOp,
          editor.selected,
        ),
      show: (anchor, lastPosition) => editor.showAnchor(anchor, lastPosition),
      // the server applies the suggestion (REST); its applied, with this id, is one undo step
      beginApply: (name) => {
        const editId = editor.sync.expectExpanded("review", name);
        return editId === null
          ? "the graph has not loaded yet"
          : { editId, baseVersion: editor.sync.session.version! };
      },
      cancelApply: (editId) => editor.sync.cancelExpanded(editId),
      pinsChanged: () => editor.invalidate(),
    });
  }
  const right = el(
    "aside",
    { class: "geon-side geon-right" },
    ...(reviews ? [reviews.element] : []),
    shardsPanel.element,
    issuesPanel.element,
    runPanel.element,
  );
  root.append(
    toolbar.element,
    narrowNote(),
    el("div", { class: "geon-main" }, left, stage, right),
    palette.element,
    tensorDialog.element,
  );

  return {
    toolbar,
    axesPanel,
    inspector,
    issuesPanel,
    shardsPanel,
    projection,
    palette,
    tensorDialog,
    runPanel,
    diagram,
    /** The Reviews panel (null offline: the benchmark page has no server). */
    reviews,
  };
}

/** The panels from the editor's state (after a change of state, not on a pan or zoom). */
export function updatePanels(editor: Editor, panels: EditorPanels): void {
  const doc = editor.sync.session.document;
  const version = editor.sync.session.version;
  const state = editor.state();
  const issues = state.issues;
  const colors = new Map(editor.sync.session.present.map((p) => [p.user, personColor(p.user)]));
  panels.toolbar.update(state, {
    canUndo: editor.sync.history.canUndo,
    canRedo: editor.sync.history.canRedo,
    found: editor.found.length,
    colors,
    me: editor.options.user,
    readOnly: editor.sync.readOnly(),
  });
  panels.axesPanel.update(doc, axesWithIssues(issues));
  panels.inspector.update(doc, editor.selected, issues);
  panels.projection.update(doc, editor.selected);
  panels.issuesPanel.update(issues, doc, state.issueCounts);
  panels.shardsPanel.update(doc, editor.selected, issues, version);
  panels.runPanel.update(state.run, version);
  panels.reviews?.update();
  if (panels.diagram.visible && version !== null) panels.diagram.show(version);
  markReadOnly(editor.root, editor.sync.readOnly());
}
