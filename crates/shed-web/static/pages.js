// The script of shed's own pages, served at /_shed/pages.js: a button with
// data-copy="<id>" copies the text of the element with that id.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  const source = button && document.getElementById(button.dataset.copy);
  if (!source) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(
    () => { button.textContent = "Copied"; },
    () => { button.textContent = "Select it and copy"; },
  );
});
