// The graph list's REST calls (DESIGN.md §6): create, rename, duplicate, delete, import and export.

import type { LoomDocument } from "../model/document";
import { answer, answerAs, json, RestClient } from "./client";

const graph = answerAs<GraphInfo>();

export interface GraphInfo {
  id: string;
  title: string;
  version: number;
  document?: LoomDocument;
}

export class GraphsApi extends RestClient {
  create(title: string, document: LoomDocument): Promise<GraphInfo> {
    return graph(this.api.POST("/api/v1/graphs", { body: { title, document: json(document) } }));
  }

  get(id: string): Promise<GraphInfo> {
    return graph(this.api.GET("/api/v1/graphs/{graph_id}", { params: { path: { graph_id: id } } }));
  }

  /** Rename at the current version (a stale version is refused by the server with 409). */
  async rename(id: string, title: string): Promise<GraphInfo> {
    const g = await this.get(id);
    return graph(
      this.api.PATCH("/api/v1/graphs/{graph_id}", {
        params: { path: { graph_id: id } },
        body: { baseVersion: g.version, title },
      }),
    );
  }

  /** Store a LoomGraph document as it is, as a new graph; with no ``title``, the server takes
   * the one in the document's About tag (as exported). */
  import(title: string | null, document: LoomDocument): Promise<GraphInfo> {
    const query = title === null ? {} : { title };
    return graph(
      this.api.POST("/api/v1/graphs/import", { params: { query }, body: json(document) }),
    );
  }

  /** The export's address (a link the browser downloads), on the page's origin. */
  exportUrl(id: string): string {
    return `/api/v1/graphs/${encodeURIComponent(id)}/export`;
  }

  remove(id: string): Promise<void> {
    return answer(
      this.api.DELETE("/api/v1/graphs/{graph_id}", { params: { path: { graph_id: id } } }),
    );
  }

  /** A copy of yours titled "<title> (copy)", with the document and the description. */
  duplicate(id: string): Promise<GraphInfo> {
    return graph(
      this.api.POST("/api/v1/graphs/{graph_id}/duplicate", { params: { path: { graph_id: id } } }),
    );
  }
}
