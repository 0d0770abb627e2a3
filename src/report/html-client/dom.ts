// Building the page with createElement and textContent only: untrusted strings are never parsed as HTML.

type AttrValue = string | number | boolean | null | undefined;
type Handler = (event: Event) => void;
/** Style properties by CSS name: custom properties (`--c`) and standard ones (`margin-top`). */
export type StyleMap = Record<string, string>;

/**
 * Element properties: `class`, `text` (textContent), `style` (a StyleMap), `on<event>` (a listener); any other
 * key is an attribute (`true` sets it empty; `false`, null and undefined leave it out).
 */
export type Props = Record<string, AttrValue | StyleMap | Handler>;

/** Children: nodes, or strings and numbers as text; null, undefined and false are skipped; arrays are flattened. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  children?: Child,
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (typeof value === "object") {
      for (const [name, style] of Object.entries(value)) el.style.setProperty(name, style);
    } else if (key === "class") el.className = String(value);
    else if (key === "text") el.textContent = String(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

export function add<E extends Node>(el: E, children: Child): E {
  if (children === null || children === undefined || children === false) return el;
  if (Array.isArray(children)) {
    for (const child of children as readonly Child[]) add(el, child);
    return el;
  }
  el.appendChild(
    typeof children === "object" ? (children as Node) : document.createTextNode(String(children)),
  );
  return el;
}

/** An element the page itself created; missing means the page is broken, so it throws. */
export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`report page: no element #${id}`);
  return el;
}
