// The fare form, live: effective prices and "cents kept" follow what the
// carrier types, and tier and peak-window rows can be added and removed
// without a round trip. Without JavaScript the form still works: the server
// computes the same numbers and the "Add" buttons post the form back.
(function () {
  "use strict";
  var form = document.getElementById("fare-form") || document.getElementById("preview-form");
  // A refused form opens at its summary of problems, not at the top.
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();
  if (!form) return;

  // The preview panel follows the form: after a pause in typing, the form is
  // posted to the preview endpoint and the panel replaced by the answer.
  // Answers to older requests are dropped.
  var previewURL = form.getAttribute("data-preview-url");
  var timer = null, sequence = 0;
  function refreshPreview() {
    if (!previewURL) return;
    var mine = ++sequence;
    var panel = document.getElementById("preview-panel");
    if (panel) panel.classList.add("updating");
    fetch(previewURL, { method: "POST", body: new FormData(form), headers: { "X-Preview": "fragment" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        if (mine !== sequence) return;
        var current = document.getElementById("preview-panel");
        if (!current) return;
        var open = Array.prototype.map.call(current.querySelectorAll("details[open]"), function (d) { return d.getAttribute("data-testid"); });
        // Focus inside the panel (a workload-mix input, the charts' select)
        // stays where the person was, caret included.
        var active = document.activeElement, focusKey = null, caret = null;
        if (active && current.contains(active)) {
          focusKey = active.id ? "#" + CSS.escape(active.id) : active.name ? '[name="' + CSS.escape(active.name) + '"]' : null;
          try { caret = [active.selectionStart, active.selectionEnd]; } catch (e) { caret = null; }
        }
        current.outerHTML = html;
        if (focusKey) {
          var again = document.getElementById("preview-panel").querySelector(focusKey);
          if (again) {
            again.focus();
            if (caret && caret[0] !== null && again.setSelectionRange) {
              try { again.setSelectionRange(caret[0], caret[1]); } catch (e) { /* not a text field */ }
            }
          }
        }
        // The short summary beside the form follows the new panel.
        var src = document.getElementById("preview-summary-src");
        var summary = document.getElementById("preview-summary");
        if (src && summary) summary.replaceChildren(src.content.cloneNode(true));
        open.forEach(function (id) {
          var d = document.querySelector('details[data-testid="' + id + '"]');
          if (d) d.open = true;
        });
      })
      .catch(function () {
        var current = document.getElementById("preview-panel");
        if (current) current.classList.remove("updating");
      });
  }
  function schedulePreview() {
    clearTimeout(timer);
    timer = setTimeout(refreshPreview, 300);
  }
  document.addEventListener("input", function (event) {
    if (event.target.form === form) schedulePreview();
  });
  document.addEventListener("change", function (event) {
    if (event.target.form === form) schedulePreview();
  });

  // Exact decimal arithmetic in integer micro-dollars and basis points, with
  // BigInt, so the page shows what the server would.
  function parseFixed(text, places) {
    text = String(text || "").trim().replace(/^\$/, "").replace(/\s*%$/, "");
    if (!/^\+?(\d+\.?\d*|\.\d+)$/.test(text)) return null;
    var parts = text.replace(/^\+/, "").split(".");
    var frac = (parts[1] || "").replace(/0+$/, "");
    if (frac.length > places) return null;
    while (frac.length < places) frac += "0";
    return BigInt(parts[0] || "0") * (10n ** BigInt(places)) + BigInt(frac || "0");
  }
  function formatFixed(units, places, minPlaces) {
    var scale = 10n ** BigInt(places);
    var whole = units / scale, frac = (units % scale).toString().padStart(places, "0").replace(/0+$/, "");
    while (frac.length < minPlaces) frac += "0";
    return frac ? whole + "." + frac : whole.toString();
  }
  // Round half away from zero, as money.Micros.Scale does.
  function scale(value, num, den) {
    var p = value * num, q = p / den, r = p % den;
    if (2n * (r < 0n ? -r : r) >= den) q += 1n;
    return q;
  }

  // The fare formula's constants come from the server (internal/fare via
  // data attributes), never typed here: filed x (1 - discount) x
  // (1 + baseline - landing fee), in basis points.
  function lever(name) { return BigInt(form.getAttribute("data-" + name + "-bp") || "0"); }
  var UNIT = lever("unit"), BASELINE = lever("baseline-landing-fee"), MIN_FEE = lever("min-landing-fee"),
      MAX_FEE = lever("max-landing-fee"), MAX_DISCOUNT = lever("max-discount");

  function update() {
    if (!form.elements.landing_fee || !form.elements.discount || UNIT === 0n) return;
    var lf = form.elements.landing_fee.value.trim() === "" ? BASELINE : parseFixed(form.elements.landing_fee.value, 2);
    var d = form.elements.discount.value.trim() === "" ? 0n : parseFixed(form.elements.discount.value, 2);
    var ok = lf !== null && d !== null && lf >= MIN_FEE && lf <= MAX_FEE && d <= MAX_DISCOUNT;
    var kept = document.querySelector("[data-kept]");
    if (kept) kept.textContent = ok ? formatFixed((UNIT - d) * (UNIT - lf) / UNIT, 2, 0) : "—";
    document.querySelectorAll("[data-effective-for]").forEach(function (el) {
      var input = form.elements[el.getAttribute("data-effective-for")];
      var price = input && input.value.trim() !== "" ? parseFixed(input.value, 6) : null;
      el.textContent = ok && price !== null ? "$" + formatFixed(scale(price, (UNIT - d) * (UNIT + BASELINE - lf), UNIT * UNIT), 6, 2) : "—";
    });
  }
  form.addEventListener("input", update);

  form.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add-row]");
    if (add) {
      event.preventDefault();
      var kind = add.getAttribute("data-add-row");
      var template = document.getElementById(kind + "-template");
      var body = form.querySelector('[data-rows="' + kind + '"]');
      var row = template.content.cloneNode(true);
      // A new row's inputs take no id: the server numbers rows it renders.
      row.querySelectorAll("[id]").forEach(function (el) { el.removeAttribute("id"); });
      body.appendChild(row);
      var inputs = body.lastElementChild.querySelectorAll("input");
      if (inputs.length) inputs[0].focus();
      schedulePreview();
      return;
    }
    var remove = event.target.closest("[data-remove-row]");
    if (remove) {
      event.preventDefault();
      remove.closest("tr").remove();
      schedulePreview();
    }
  });
  update();
})();
