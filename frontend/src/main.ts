// Entry point of the editor shell: mounts the toolbar and canvas into #geon-editor, follows the
// graph's websocket, and exposes a small read-only test API as ``window.geon``.

import "./ui/editor.css";
import { graphView, issuesByNode, type GraphView } from "./model/document";
import { applyRun, applySnapshot, initialState, type EditorState, type RunInfo } from "./model/state";
import { COLORS, drawGraph, fitViewport, toScreen, type Viewport } from "./render/canvas";
import { layoutView, type Layout, type Rect } from "./render/layout";
import { GraphSocket, socketUrl } from "./sync/socket";
import { createToolbar } from "./ui/toolbar";

interface ScreenBox extends Rect {
  id: string;
  kind: string;
}

export interface GeonTestApi {
  /** A copy of the editor state. */
  state(): EditorState;
  /** How many times the canvas has been painted with a laid-out graph. */
  draws(): number;
  /** Each drawn box in canvas CSS pixels. */
  boxes(): ScreenBox[];
  colors: typeof COLORS;
}

declare global {
  interface Window {
    geon: GeonTestApi;
  }
}

function mount(root: HTMLElement): void {
  const wsPath = root.dataset.wsPath ?? "";
  const runsUrl = root.dataset.runsUrl ?? "";
  const csrf = document.querySelector<HTMLInputElement>("input[name=csrfmiddlewaretoken]")?.value ?? "";

  let state = initialState();
  let view: GraphView | null = null;
  let layout: Layout | null = null;
  let viewport: Viewport | null = null;
  let draws = 0;

  const canvas = document.createElement("canvas");
  canvas.className = "geon-canvas";
  const toolbar = createToolbar(() => void requestRun());
  root.append(toolbar.element, canvas);

  const setState = (next: EditorState): void => {
    state = next;
    toolbar.update(state);
  };

  const paint = (): void => {
    if (!view || !layout) return;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    viewport = fitViewport(layout, width, height);
    drawGraph(ctx, view, layout, viewport, issuesByNode(state.issues), { width, height });
    draws += 1;
  };

  const showDocument = async (): Promise<void> => {
    if (!state.document) return;
    const nextView = graphView(state.document);
    layout = await layoutView(nextView);
    view = nextView;
    paint();
  };

  async function requestRun(): Promise<void> {
    setState({ ...state, message: "" });
    try {
      const response = await fetch(runsUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ backend: "numpy" }),
        credentials: "same-origin",
      });
      const body = (await response.json()) as { run?: RunInfo; error?: { message: string } };
      if (body.run) setState(applyRun(state, { type: "run", event: "queued", run: body.run }));
      else setState({ ...state, message: body.error?.message ?? `the server answered ${response.status}` });
    } catch {
      setState({ ...state, message: "the server could not be reached; try again" });
    }
  }

  const socket = new GraphSocket(socketUrl(wsPath, window.location), {
    onOpen: () => setState({ ...state, connection: "open" }),
    onMessage: (msg) => {
      if (msg.type === "snapshot") {
        setState(applySnapshot(state, msg));
        void showDocument();
      } else if (msg.type === "run") {
        setState(applyRun(state, msg));
      } else {
        setState({ ...state, message: msg.error.message });
      }
    },
    onClose: (code, final) =>
      setState({ ...state, connection: "closed", message: final ? `the server closed the connection (${code})` : "" }),
    onInvalid: (reason) => setState({ ...state, message: `ignored a message from the server: ${reason}` }),
  });

  window.geon = {
    state: () => structuredClone(state),
    draws: () => draws,
    boxes: () =>
      view && layout && viewport
        ? view.boxes.flatMap((b) => {
            const rect = layout?.rects.get(b.id);
            return rect && viewport ? [{ id: b.id, kind: b.kind, ...toScreen(rect, viewport) }] : [];
          })
        : [],
    colors: COLORS,
  };

  new ResizeObserver(() => paint()).observe(canvas);
  toolbar.update(state);
  socket.connect();
}

const root = document.getElementById("geon-editor");
if (root) mount(root);
