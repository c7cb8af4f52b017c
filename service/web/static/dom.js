// What the service's pages (the dashboard, the editor) share: el(tag, attributes, ...children) makes an element.
"use strict";

/** An element: attributes ("class", "data-*", or properties such as onclick), then children (nodes or text). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}
