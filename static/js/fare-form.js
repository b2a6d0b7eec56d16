// The fare form, live: effective prices and "cents kept" follow what the
// carrier types, and tier and peak-window rows can be added and removed
// without a round trip. Without JavaScript the form still works: the server
// computes the same numbers and the "Add" buttons post the form back.
(function () {
  "use strict";
  var form = document.getElementById("fare-form");
  if (!form) return;

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

  function update() {
    var lf = form.elements.landing_fee.value.trim() === "" ? 2000n : parseFixed(form.elements.landing_fee.value, 2);
    var d = form.elements.discount.value.trim() === "" ? 0n : parseFixed(form.elements.discount.value, 2);
    var ok = lf !== null && d !== null && lf >= 500n && lf <= 5000n && d <= 5000n;
    var kept = document.querySelector("[data-kept]");
    if (kept) kept.textContent = ok ? formatFixed((10000n - d) * (10000n - lf) / 10000n, 2, 0) : "—";
    document.querySelectorAll("[data-effective-for]").forEach(function (el) {
      var input = form.elements[el.getAttribute("data-effective-for")];
      var price = input && input.value.trim() !== "" ? parseFixed(input.value, 6) : null;
      el.textContent = ok && price !== null ? "$" + formatFixed(scale(price, (10000n - d) * (12000n - lf), 100000000n), 6, 2) : "—";
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
      body.appendChild(template.content.cloneNode(true));
      var inputs = body.lastElementChild.querySelectorAll("input");
      if (inputs.length) inputs[0].focus();
      return;
    }
    var remove = event.target.closest("[data-remove-row]");
    if (remove) {
      event.preventDefault();
      remove.closest("tr").remove();
    }
  });
  update();
})();
