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
