// Small DOM helpers: elements from code (no HTML strings, so nothing from the hub is ever markup).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else el.setAttribute(name, value === true ? '' : value);
  }
  el.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

/** A table with a caption, a header row and rows of cells (text or elements). */
export function table(caption, headers, rows, empty = 'Nothing yet.') {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

export const notPermittedNote = () => h('p', { class: 'note', role: 'status' }, 'Not permitted for this token.');

export function failure(e) {
  return h('p', { class: 'error', role: 'alert' }, `The hub refused: ${e.message}`);
}

export const time = (iso) => (iso ? iso.replace('T', ' ').replace('Z', '') : '');
