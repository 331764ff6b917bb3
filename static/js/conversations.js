// Sample conversations: ask before a form marked data-confirm is sent (no inline handlers: CSP).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
  if (!window.confirm(form.dataset.confirm)) event.preventDefault();
}, true);
