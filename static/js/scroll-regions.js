// Boxes that scroll sideways on a narrow screen (wide tables) must be
// reachable by keyboard: one that holds nothing focusable becomes a named,
// focusable region, so arrow keys scroll it. Set again when the size
// changes and after htmx swaps a fragment in; removed when it fits again.
(function () {
  "use strict";
  var focusable = "a[href], button, input, select, textarea, [tabindex]:not([data-scroll-region])";
  function mark() {
    document.querySelectorAll("table.grid, .scroll, .card").forEach(function (el) {
      var style = getComputedStyle(el);
      var scrolls = (style.overflowX === "auto" || style.overflowX === "scroll") && el.scrollWidth > el.clientWidth + 1;
      if (scrolls && !el.querySelector(focusable)) {
        if (!el.hasAttribute("data-scroll-region")) {
          el.setAttribute("data-scroll-region", "");
          el.setAttribute("tabindex", "0");
          if (!el.hasAttribute("aria-label") && !el.hasAttribute("aria-labelledby")) {
            var caption = el.querySelector("caption, h2, h3");
            el.setAttribute("aria-label", (caption ? caption.textContent.trim() + ": " : "") + "scrolls sideways");
          }
          if (el.tagName !== "TABLE") el.setAttribute("role", "region");
        }
      } else if (el.hasAttribute("data-scroll-region")) {
        el.removeAttribute("data-scroll-region");
        el.removeAttribute("tabindex");
        el.removeAttribute("role");
      }
    });
  }
  var pending = 0;
  function soon() { cancelAnimationFrame(pending); pending = requestAnimationFrame(mark); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark); else mark();
  window.addEventListener("resize", soon);
  document.addEventListener("htmx:afterSettle", soon);
})();
