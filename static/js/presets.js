// Preset library: the upload progress bar and a size check before a too-large file is sent.
// No inline scripts anywhere (the CSP forbids them); everything hangs off data- attributes.
(function () {
  function uploadForm(element) {
    return element && element.closest ? element.closest("form[data-upload]") : null;
  }

  function showProgress(form, percent) {
    const bar = form.querySelector(".upload-progress");
    const label = form.querySelector(".upload-percent");
    if (!bar) return;
    bar.classList.remove("hidden");
    bar.value = percent;
    bar.textContent = percent + "%";
    if (label) label.textContent = percent < 100 ? percent + "% sent" : "Reading the preset…";
  }

  function hideProgress(form) {
    const bar = form.querySelector(".upload-progress");
    const label = form.querySelector(".upload-percent");
    if (bar) bar.classList.add("hidden");
    if (label) label.textContent = "";
  }

  function showError(form, text) {
    const box = form.querySelector("#upload-result");
    if (!box) return;
    box.replaceChildren();
    const p = document.createElement("p");
    p.className = "error";
    p.dataset.testid = "upload-error";
    p.textContent = text;
    box.append(p);
  }

  document.addEventListener("change", (event) => {
    const input = event.target;
    const form = uploadForm(input);
    if (!form || input.type !== "file" || !input.files || !input.files[0]) return;
    const limit = parseInt(form.dataset.maxBytes || "0", 10);
    if (limit && input.files[0].size > limit) {
      showError(form, "The file is larger than the " + Math.max(1, Math.floor(limit / 1048576)) + " MiB limit for presets.");
      input.value = "";
    }
  });

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = uploadForm(event.target);
    if (form) showProgress(form, 0);
  });

  document.addEventListener("htmx:xhr:progress", (event) => {
    const form = uploadForm(event.target);
    if (!form || !event.detail.lengthComputable || !event.detail.total) return;
    showProgress(form, Math.round((event.detail.loaded / event.detail.total) * 100));
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const form = uploadForm(event.target);
    if (form) hideProgress(form);
  });
})();

// The preset editor answers row by row; each answer carries the preset's new version in
// #preset-version. A one-click row action (move, copy, delete) sends that version, as a reload
// would, so a second move is not refused as a conflict with the first. An open node's form keeps
// the version it was opened at: a change to that node meanwhile is still caught.
(function () {
  document.addEventListener("htmx:configRequest", (event) => {
    const elt = event.detail.elt;
    const form = elt && elt.closest ? elt.closest("form") : null;
    const meta = document.getElementById("preset-version");
    if (!form || !meta || form.classList.contains("node-form") || !form.closest("#node-list")) return;
    if (event.detail.parameters.version !== undefined) event.detail.parameters.version = meta.dataset.version;
  });
})();
