// trackgrade console: copy buttons. The only script; no inline script anywhere.
"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest("button.copy");
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  var text = field.value !== undefined ? field.value : field.textContent;
  var done = function () {
    var label = button.textContent;
    button.textContent = "Copied";
    button.classList.add("copied");
    setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1500);
  };
  var fallback = function () {
    field.select();
    try { document.execCommand("copy"); done(); } catch (e) { /* selected for Ctrl-C */ }
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, fallback);
  } else {
    fallback();
  }
});
