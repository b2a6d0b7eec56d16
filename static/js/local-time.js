// Times are typed in UTC (the portal's one clock); beside each such field
// this says what the typed time is where the person is, as they type, so a
// carrier in UTC-5 does not plan a window five hours off. Fields opt in
// with data-utc-echo; the echo goes to the element whose id it names.
(function () {
  "use strict";
  function echo(input) {
    var out = document.getElementById(input.getAttribute("data-utc-echo"));
    if (!out) return;
    var m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}))?$/.exec(input.value.trim());
    if (!m) { out.textContent = ""; return; }
    var at = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0)));
    if (isNaN(at.getTime())) { out.textContent = ""; return; }
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "your time zone";
    out.textContent = "That is " + at.toLocaleString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric",
      hour: "2-digit", minute: "2-digit" }) + " your time (" + zone + ").";
  }
  function wire(root) {
    root.querySelectorAll("input[data-utc-echo]").forEach(function (input) {
      if (input.hasAttribute("data-utc-echo-wired")) return;
      input.setAttribute("data-utc-echo-wired", "");
      input.addEventListener("input", function () { echo(input); });
      echo(input);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { wire(document); });
  document.addEventListener("htmx:afterSettle", function (e) { wire(e.target); });
})();
