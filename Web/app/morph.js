// Brings a part of the page to new HTML by changing only what differs: nodes that stay are kept
// (with their focus, selection, scroll, input-method composition and typed values), attributes
// and text that changed are set in place, children with a `data-key` are matched by it. The pages
// describe themselves as a whole each time and this makes the page so, touching little.

export function morph(element, html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  patchChildren(element, template.content);
}

function keyOf(node) {
  return node.nodeType === Node.ELEMENT_NODE ? node.getAttribute('data-key') : null;
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType !== Node.ELEMENT_NODE) return true;
  return a.tagName === b.tagName && keyOf(a) === keyOf(b) && (a.tagName !== 'INPUT' || a.type === b.type);
}

function patchChildren(parent, next) {
  const wanted = Array.from(next.childNodes);
  const keyed = new Map();
  for (const child of parent.childNodes) {
    const key = keyOf(child);
    if (key !== null) keyed.set(key, child);
  }
  let index = 0;
  for (const node of wanted) {
    let current = parent.childNodes[index] || null;
    const key = keyOf(node);
    if (key !== null && keyed.has(key)) {
      const match = keyed.get(key);
      keyed.delete(key);
      if (match !== current) parent.insertBefore(match, current);
      current = match;
    }
    if (current && sameKind(current, node)) {
      patch(current, node);
    } else if (current && keyOf(current) === null && key === null) {
      parent.replaceChild(node, current);
    } else {
      parent.insertBefore(node, current);
    }
    index += 1;
  }
  while (parent.childNodes.length > index) parent.removeChild(parent.lastChild);
}

function patch(current, next) {
  if (current.nodeType !== Node.ELEMENT_NODE) {
    if (current.nodeValue !== next.nodeValue) current.nodeValue = next.nodeValue;
    return;
  }
  for (const { name } of Array.from(current.attributes)) {
    if (!next.hasAttribute(name)) current.removeAttribute(name);
  }
  for (const { name, value } of Array.from(next.attributes)) {
    if (current.getAttribute(name) !== value) current.setAttribute(name, value);
  }
  // What a person typed is theirs: a field's value is set only from its first drawing.
  if (current.tagName === 'TEXTAREA') return;
  patchChildren(current, next);
}
