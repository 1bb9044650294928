// The page's elements, found and made for the console's other modules; only
// a browser has them. Tested by test/integration/console.test.ts.

/** The page's element with this id, checked to be of the expected kind. */
export function byId<T extends HTMLElement>(id: string, kind: { new (): T; prototype: T }): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) {
    throw new Error(`the page has no #${id} of the expected kind`);
  }
  return element;
}

/** A new element with its text (never HTML: the page's CSP allows no HTML from strings). */
export function create<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text = "",
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  element.textContent = text;
  return element;
}
