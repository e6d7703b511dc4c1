// Authoring the axes panel's commands: declare, edit (rename, resize, re-role) and remove an axis,
// as edit ops (author.ts says how commands are written and refused).

import { AXIS_NAME, type AxisDecl } from "./axes";
import {
  AXIS,
  declaredAxes,
  INDEX_AXES,
  nodeById,
  OPERATION,
  ROLES,
  TENSOR,
  TENSOR_AXES,
  tensorAxes,
  tensorRange,
  type LoomDocument,
} from "./document";
import { applyOps, type EditOp } from "./edits";
import { axisEditRefusal, renamedParams, renameRef } from "./axisRename";
import { AuthorError, q, safeBase, uuid } from "./author";
import { rangeFor, rederive, same } from "./derive";

// --- axes -------------------------------------------------------------------------------------

export interface AxisInput {
  name: string;
  length: number | null;
  roles?: string[];
}

function checkAxis(doc: LoomDocument, input: AxisInput, self?: string): AxisDecl {
  const name = input.name.trim();
  if (!AXIS_NAME.test(name))
    throw new AuthorError(
      `axis name "${name}" is invalid; expected a letter or "_" followed by letters, digits or "_"`,
    );
  const other = declaredAxes(doc).get(name);
  if (other && other.id !== self)
    throw new AuthorError(`axis "${name}" is already declared; choose another name`);
  const length = input.length;
  if (length !== null && (!Number.isInteger(length) || length < 1)) {
    throw new AuthorError(
      `axis "${name}" length "${length}" is invalid; expected an integer >= 1, or empty for not yet bound`,
    );
  }
  const roles = input.roles ?? [];
  for (const role of roles) {
    if (!(ROLES as readonly string[]).includes(role))
      throw new AuthorError(
        `axis "${name}" role "${role}" is not known; expected one of ${q(ROLES)}`,
      );
  }
  return roles.length ? { name, length, roles } : { name, length };
}

export function declareAxis(doc: LoomDocument, input: AxisInput): EditOp[] {
  const body = checkAxis(doc, input);
  return [
    { op: "add_node", node: { id: uuid(), type: AXIS, label: body.name, body: { ...body } } },
  ];
}

/**
 * Change an axis's name, length or roles: the server's ``set_axis`` rule (axisRename.ts; the
 * shared cases of tests/core/axis_rename_cases.json), refused in the server's words. The editor
 * also resizes the tensors that use the axis and re-derives what reads them (the server's
 * ``set_axis`` leaves that to the checker).
 */
export function editAxis(doc: LoomDocument, id: string, input: AxisInput): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== AXIS) throw new AuthorError(`node "${id}" is not an axis`);
  const oldName = String(node.body.name);
  const name = input.name.trim();
  const refusal = axisEditRefusal(new Set(declaredAxes(doc).keys()), oldName, name, input.length);
  if (refusal) throw new AuthorError(refusal);
  const roles = checkAxis(doc, { ...input, name }, id).roles ?? null;
  // the label follows the name where it was the name; an unbound length is written as null,
  // which a merge patch cannot do: the Axis is replaced (moving to the end), as the server does
  const label = name !== oldName && node.label === oldName ? { label: name } : {};
  const ops: EditOp[] = [];
  if (input.length === null) {
    const body: Record<string, unknown> = { ...node.body, name, length: null, roles };
    if (!roles) delete body.roles;
    ops.push({ op: "remove_node", id }, { op: "add_node", node: { ...node, ...label, body } });
  } else ops.push({ op: "update_node", id, ...label, body: { name, length: input.length, roles } });
  const declared = declaredAxes(applyOps(doc, ops));
  const touched: string[] = [];
  for (const n of doc.nodes) {
    const update: EditOp & { op: "update_node" } = { op: "update_node", id: n.id };
    const tags: Record<string, unknown> = {};
    const url = n.type === TENSOR ? TENSOR_AXES : n.type === OPERATION ? INDEX_AXES : null;
    const axes = url && (n.tags?.[url] as { axes?: unknown } | undefined)?.axes;
    if (url && Array.isArray(axes)) {
      const renamed = axes.map((a) => renameRef(a, oldName, name));
      if (renamed.some((a, i) => a !== axes[i])) tags[url] = { axes: renamed };
      const range = n.type === TENSOR ? rangeFor(renamed, declared, tensorRange(n)?.start) : null;
      if (range && !same(range, tensorRange(n))) {
        update.body = { range };
        touched.push(n.id);
      }
    }
    if (Object.keys(tags).length) update.tags = tags;
    const params = n.type === OPERATION ? renamedParams(n.body.params, oldName, name) : undefined;
    if (params !== undefined && !same(params, n.body.params)) {
      // a merge patch would merge a map's old keys back in: params are replaced whole
      ops.push(
        { ...update, body: { params: null } },
        { op: "update_node", id: n.id, body: { params } },
      );
    } else if (update.body || update.tags) ops.push(update);
  }
  return [...ops, ...rederive(applyOps(doc, ops), touched)];
}
export function removeAxis(doc: LoomDocument, id: string): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== AXIS) throw new AuthorError(`node "${id}" is not an axis`);
  const name = String(node.body.name);
  const users = doc.nodes.filter(
    (n) => n.type === TENSOR && (tensorAxes(n) ?? []).some((a) => safeBase(a).includes(name)),
  );
  if (users.length)
    throw new AuthorError(
      `axis "${name}" is used by ${q(users.map((u) => u.label ?? u.id))}; change or delete those tensors first`,
    );
  return [{ op: "remove_node", id }];
}
