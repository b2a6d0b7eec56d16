// The fare form, live: effective prices, "cents kept" and field messages
// follow what the carrier types, and tier and peak-window rows can be added
// and removed without a round trip; the preview panel follows through htmx. Without JavaScript the form still works: the server
// computes the same numbers and the "Add" buttons post the form back.
(function () {
  "use strict";
  var form = document.getElementById("fare-form") || document.getElementById("preview-form");
  // A refused form opens at its summary of problems, not at the top.
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();
  if (!form) return;

  // The preview panel follows the form through htmx (the form's hx-*
  // attributes). Around each swap this keeps what htmx does not: the
  // sections a person opened stay open, and the short summary beside the
  // form follows the new panel.
  var opened = [];
  function isPanel(event) { return event.detail.target && event.detail.target.id === "preview-panel"; }
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    if (!isPanel(event)) return;
    opened = Array.prototype.map.call(event.detail.target.querySelectorAll("details[open]"), function (d) { return d.getAttribute("data-testid"); });
  });
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (!isPanel(event)) return;
    var src = document.getElementById("preview-summary-src");
    var summary = document.getElementById("preview-summary");
    if (src && summary) summary.replaceChildren(src.content.cloneNode(true));
    opened.forEach(function (id) {
      var d = document.querySelector('details[data-testid="' + id + '"]');
      if (d) d.open = true;
    });
  });
  // Rows added or removed without typing ask for a preview too.
  function schedulePreview() { form.dispatchEvent(new Event("change", { bubbles: true })); }

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
      el.textContent = ok && price !== null ? dollars(scale(price, (UNIT - d) * (UNIT + BASELINE - lf), UNIT * UNIT)) : "—";
    });
  }
  form.addEventListener("input", update);

  // The console's rule for a price per million tokens (as the server writes
  // it): 4 decimals, all 6 when it has them, thousands grouped.
  function dollars(micros) {
    var text = formatFixed(micros, 6, 4), parts = text.split(".");
    return "$" + parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (parts[1] ? "." + parts[1] : "");
  }

  // Live field messages: a price or percentage that cannot be read says so
  // next to its field as it is typed (the server's words), marks the field
  // invalid and describes it by the message; fixed, both go.
  function percentText(bp) { return formatFixed(bp, 2, 0); }
  function problem(input) {
    var text = input.value.trim();
    if (text === "") return null;
    if (input.hasAttribute("data-price")) {
      if (parseFixed(text, 6) !== null) return null;
      if (text.indexOf(",") >= 0) return "Use a decimal point, not a comma: " + text.replace(/,/g, ".") + ", not " + text + ".";
      return "Enter a price in USD per million tokens, like 0.55 (at most 6 decimal places).";
    }
    var bp = parseFixed(text, 2), lo = 0n, hi = MAX_DISCOUNT;
    if (input.name === "landing_fee") { lo = MIN_FEE; hi = MAX_FEE; }
    if (bp !== null && bp >= lo && bp <= hi) return null;
    return "Enter a percentage from " + percentText(lo) + " to " + percentText(hi) + ".";
  }
  function showProblem(input) {
    if (!input.id || UNIT === 0n) return;
    var msg = problem(input), id = input.id + "-error", el = document.getElementById(id);
    if (msg === null) {
      if (el) el.remove();
      input.removeAttribute("aria-invalid");
      var rest = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (x) { return x && x !== id; });
      if (rest.length) input.setAttribute("aria-describedby", rest.join(" ")); else input.removeAttribute("aria-describedby");
      return;
    }
    if (!el) {
      el = document.createElement("p");
      el.className = "field-error";
      el.id = id;
      el.setAttribute("data-testid", "error-" + input.id);
      input.closest(".field").appendChild(el);
    }
    el.textContent = msg;
    input.setAttribute("aria-invalid", "true");
    var ids = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    if (ids.indexOf(id) < 0) ids.push(id);
    input.setAttribute("aria-describedby", ids.join(" "));
  }
  form.addEventListener("input", function (event) {
    var t = event.target;
    if (t.hasAttribute && (t.hasAttribute("data-price") || t.name === "landing_fee" || t.name === "discount") && t.closest(".field")) showProblem(t);
  });

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
