// Shared behaviour for every page. No inline scripts anywhere: the CSP forbids them.
document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  const box = document.querySelector(".messages") || document.createElement("ul");
  if (!box.parentNode) {
    box.className = "messages";
    document.getElementById("main").prepend(box);
  }
  const item = document.createElement("li");
  item.className = "message error";
  item.textContent = status === 403 ? "Your role on this server does not allow that." : "That did not work (HTTP " + status + "). Reload the page and try again.";
  box.append(item);
});
// "Copy as JSON": a button[data-copy] copies the text of the element its selector names. The
// buttons start hidden (nothing to click without JavaScript: the JSON is shown beside them).
function showCopyButtons(root) {
  if (!navigator.clipboard) return;
  root.querySelectorAll("button[data-copy][hidden]").forEach((button) => { button.hidden = false; });
}
document.addEventListener("DOMContentLoaded", () => showCopyButtons(document));
document.addEventListener("htmx:load", (event) => showCopyButtons(event.detail.elt));
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const label = button.textContent;
  navigator.clipboard.writeText(source.textContent).then(
    () => { button.textContent = "Copied"; },
    () => { button.textContent = "Copy failed: select the JSON below"; },
  ).finally(() => setTimeout(() => { button.textContent = label; }, 1500));
});
