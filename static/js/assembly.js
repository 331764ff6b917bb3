// The preview page: choosing another sample loads it at once (the form also has a submit button
// for browsers without JavaScript).
document.addEventListener("change", (event) => {
  const form = event.target.closest("form[data-autosubmit]");
  if (form) form.requestSubmit();
});
