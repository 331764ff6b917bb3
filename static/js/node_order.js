// Preset editor: reorder nodes by dragging their handle, or from the keyboard (Space picks a node
// up, the arrow keys move it, Space or Enter drops it and saves, Escape puts it back). The new
// order is posted to the reorder view; its answer (the node list) replaces the list. Without
// JavaScript the move up/down buttons do the same job. No inline scripts: the CSP forbids them.
(function () {
  let dragging = null; // {row, body, before: [rows], pointerId}
  let grabbed = null; // {row, body, before: [rows]}

  function rowsOf(body) {
    return Array.from(body.querySelectorAll(":scope > tr.node"));
  }

  function announce(text) {
    const status = document.getElementById("reorder-status");
    if (status) status.textContent = text;
  }

  function nameOf(row) {
    return row.dataset.name || "node";
  }

  function positionText(row, body) {
    const rows = rowsOf(body);
    return nameOf(row) + ", position " + (rows.indexOf(row) + 1) + " of " + rows.length;
  }

  function sameOrder(a, b) {
    return a.length === b.length && a.every((row, i) => row === b[i]);
  }

  function restore(body, rows) {
    rows.forEach((row) => body.appendChild(row));
  }

  async function save(body, row) {
    const form = document.getElementById(body.dataset.reorder);
    if (!form) return;
    const meta = document.getElementById("preset-version");
    if (meta && form.elements.version) form.elements.version.value = meta.dataset.version;
    const data = new FormData(form);
    rowsOf(body).forEach((r) => data.append("order", r.dataset.node));
    body.classList.add("saving");
    announce("Saving the new order…");
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST",
        body: data,
        headers: { "HX-Request": "true" },
        credentials: "same-origin",
      });
    } catch (error) {
      body.classList.remove("saving");
      announce("The new order could not be saved: the server did not answer.");
      return;
    }
    const html = await response.text();
    const list = document.getElementById("node-list");
    if (response.ok && list) {
      list.outerHTML = html;
      const fresh = document.getElementById("node-list");
      if (window.htmx && fresh) window.htmx.process(fresh);
      const moved = fresh && fresh.querySelector('tr[data-node="' + row.dataset.node + '"] .drag-handle');
      if (moved) moved.focus();
      announce("Saved: " + (moved ? positionText(moved.closest("tr"), moved.closest("tbody")) : "new order") + ".");
      return;
    }
    body.classList.remove("saving");
    if (response.status === 409 && list) {
      list.insertAdjacentHTML("beforebegin", html);
      announce("Not saved: someone else changed the order meanwhile.");
      return;
    }
    announce("Not saved: " + html.slice(0, 200));
  }

  // --- pointer dragging ------------------------------------------------------------------------

  document.addEventListener("pointerdown", (event) => {
    const handle = event.target.closest && event.target.closest(".drag-handle");
    const body = handle && handle.closest("tbody[data-reorder]");
    if (!body || event.button !== 0) return;
    event.preventDefault();
    const row = handle.closest("tr");
    dragging = { row, body, before: rowsOf(body), pointerId: event.pointerId };
    row.classList.add("dragging");
    body.classList.add("reordering");
  });

  document.addEventListener("pointermove", (event) => {
    if (!dragging || event.pointerId !== dragging.pointerId) return;
    event.preventDefault();
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const target = under && under.closest && under.closest("tr.node");
    if (!target || target === dragging.row || target.parentNode !== dragging.body) return;
    const box = target.getBoundingClientRect();
    const after = event.clientY > box.top + box.height / 2;
    dragging.body.insertBefore(dragging.row, after ? target.nextSibling : target);
  });

  function endDrag(event, cancelled) {
    if (!dragging || event.pointerId !== dragging.pointerId) return;
    const { row, body, before } = dragging;
    dragging = null;
    row.classList.remove("dragging");
    body.classList.remove("reordering");
    if (cancelled) {
      restore(body, before);
    } else if (!sameOrder(before, rowsOf(body))) {
      save(body, row);
    }
  }

  document.addEventListener("pointerup", (event) => endDrag(event, false));
  document.addEventListener("pointercancel", (event) => endDrag(event, true));

  // --- keyboard --------------------------------------------------------------------------------

  document.addEventListener("keydown", (event) => {
    const handle = event.target.closest && event.target.closest(".drag-handle");
    const body = handle && handle.closest("tbody[data-reorder]");
    if (!body) return;
    const row = handle.closest("tr");
    const key = event.key;
    if (key === " " || key === "Enter") {
      event.preventDefault();
      if (grabbed && grabbed.row === row) {
        const before = grabbed.before;
        grabbed = null;
        row.classList.remove("grabbed");
        handle.setAttribute("aria-pressed", "false");
        if (sameOrder(before, rowsOf(body))) {
          announce(nameOf(row) + " dropped where it was.");
        } else {
          save(body, row);
        }
      } else {
        if (grabbed) {
          restore(grabbed.body, grabbed.before);
          grabbed.row.classList.remove("grabbed");
        }
        grabbed = { row, body, before: rowsOf(body) };
        row.classList.add("grabbed");
        handle.setAttribute("aria-pressed", "true");
        announce("Picked up " + positionText(row, body) + ". Use the arrow keys, then Space to drop.");
      }
      return;
    }
    if (!grabbed || grabbed.row !== row) return;
    if (key === "ArrowUp" || key === "ArrowDown") {
      event.preventDefault();
      const sibling = key === "ArrowUp" ? row.previousElementSibling : row.nextElementSibling;
      if (sibling && sibling.matches("tr.node")) {
        body.insertBefore(row, key === "ArrowUp" ? sibling : sibling.nextSibling);
        handle.focus();
      }
      announce(positionText(row, body));
    } else if (key === "Escape") {
      event.preventDefault();
      restore(body, grabbed.before);
      grabbed = null;
      row.classList.remove("grabbed");
      handle.setAttribute("aria-pressed", "false");
      handle.focus();
      announce("Move cancelled.");
    }
  });
})();
