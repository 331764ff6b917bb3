// Short-term memory review: the page works without JavaScript; htmx swaps the review in place.
// Changing the channel picker re-runs the review at once, as the Review button would.
document.addEventListener("change", (event) => {
  const select = event.target.closest(".stm-picker select[name=channel]");
  if (select && select.form && select.form.elements.user.value && select.form.requestSubmit) select.form.requestSubmit();
});
