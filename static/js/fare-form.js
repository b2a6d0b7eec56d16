// The fare form, live: the preview panel, the effective prices, "cents
// kept" and the field messages follow what the carrier types through htmx
// (the server computes and words all of them: no rule is repeated here),
// and tier and peak-window rows can be added and removed without a round
// trip. Without JavaScript the form still works: the Preview button posts
// it and the "Add" buttons post the form back.
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
    if (summary) summary.classList.remove("stale");
    if (src && summary) summary.replaceChildren(src.content.cloneNode(true));
    opened.forEach(function (id) {
      var d = document.querySelector('details[data-testid="' + id + '"]');
      if (d) d.open = true;
    });
  });
  // A preview that could not be updated (refused as one too many in flight,
  // timed out, or the network dropped) must not pass for the price typed
  // now: the panel and the summary beside the form say they are out of date
  // until the next answer replaces them, and offer to try again.
  function markStale(event, why) {
    if (!isPanel(event)) return;
    var panel = document.getElementById("preview-panel");
    var summary = document.getElementById("preview-summary");
    if (summary) summary.classList.add("stale");
    if (!panel || panel.classList.contains("stale")) return;
    panel.classList.add("stale");
    var note = document.createElement("p");
    note.className = "stale-note";
    note.setAttribute("role", "alert");
    note.setAttribute("data-testid", "preview-stale");
    note.textContent = "Out of date: these figures are for what was typed before. The preview could not be updated (" + why + "). ";
    var retry = document.createElement("button");
    retry.type = "button";
    retry.textContent = "Update the preview";
    retry.setAttribute("data-testid", "preview-retry");
    retry.addEventListener("click", schedulePreview);
    note.appendChild(retry);
    panel.insertBefore(note, panel.firstChild);
  }
  // Refused as one too many in flight (typing outruns the server), the
  // update is asked for again when the server says to (Retry-After), a few
  // times at most, so the panel catches up once typing stops.
  var retries = 0;
  document.body.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var status = xhr ? xhr.status : 0;
    markStale(event, status === 429 ? "too many updates at once; trying again" : "the server answered " + status);
    if (status === 429 && isPanel(event) && retries < 5) {
      retries++;
      var secs = parseInt(xhr.getResponseHeader("Retry-After"), 10);
      setTimeout(schedulePreview, 1000 * (secs > 0 && secs < 10 ? secs : 1));
    }
  });
  document.body.addEventListener("htmx:afterSwap", function (event) { if (isPanel(event)) retries = 0; });
  document.body.addEventListener("htmx:sendError", function (event) { markStale(event, "the connection failed"); });
  document.body.addEventListener("htmx:timeout", function (event) { markStale(event, "no answer in time"); });

  // A text with a length limit says how much of it is used as it is typed
  // (the limit itself is the textarea's maxlength, which the server sets
  // from the rule's constant).
  form.querySelectorAll("textarea[data-count][maxlength]").forEach(function (area) {
    var out = document.getElementById(area.getAttribute("data-count"));
    var max = parseInt(area.getAttribute("maxlength"), 10);
    if (!out || !(max > 0)) return;
    var fmt = function (n) { return n.toLocaleString("en-US"); };
    var show = function () { out.textContent = fmt(area.value.length) + " of " + fmt(max) + " characters used."; };
    area.addEventListener("input", show);
    show();
  });

  // Rows added or removed without typing ask for a preview too.
  function schedulePreview() { form.dispatchEvent(new Event("change", { bubbles: true })); }

  // The live preview's answer also carries, out of band, each checked
  // field's message slot (the server's check, in its words) and the
  // effective prices: a field is marked invalid, and described by its
  // message, exactly while its slot holds one.
  document.body.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll(".field-check[id$='-check']").forEach(function (slot) {
      var input = document.getElementById(slot.id.slice(0, -"-check".length));
      if (!input) return;
      var msg = slot.querySelector(".field-error");
      var ids = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (x) { return x && !/-error$/.test(x); });
      if (msg) {
        input.setAttribute("aria-invalid", "true");
        ids.push(msg.id);
      } else {
        input.removeAttribute("aria-invalid");
      }
      if (ids.length) input.setAttribute("aria-describedby", ids.join(" ")); else input.removeAttribute("aria-describedby");
    });
  });

  form.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add-row]");
    if (add) {
      event.preventDefault();
      var kind = add.getAttribute("data-add-row");
      var template = document.getElementById(kind + "-template");
      var body = form.querySelector('[data-rows="' + kind + '"]');
      var row = template.content.cloneNode(true);
      body.appendChild(row);
      renumber(body);
      var inputs = body.lastElementChild.querySelectorAll("input");
      if (inputs.length) inputs[0].focus();
      schedulePreview();
      return;
    }
    var remove = event.target.closest("[data-remove-row]");
    if (remove) {
      event.preventDefault();
      var rows = remove.closest("tbody");
      remove.closest("tr").remove();
      renumber(rows);
      schedulePreview();
    }
  });

  // Rows are numbered as the server numbers what is posted (in order from
  // 0), so the live checks' answer for "tier.1.input" finds its slot
  // (id "tier-1-input-check") beside the right input, added or not.
  function renumber(body) {
    Array.prototype.forEach.call(body.querySelectorAll("tr"), function (tr, i) {
      tr.querySelectorAll("input[data-row][data-col]").forEach(function (input) {
        var id = input.getAttribute("data-row") + "-" + i + "-" + input.getAttribute("data-col");
        input.id = id;
        var slot = input.parentNode.querySelector(".field-check");
        if (slot) {
          slot.id = id + "-check";
          slot.replaceChildren(); // a message belongs to the row that had this number
        }
        input.removeAttribute("aria-invalid");
        input.removeAttribute("aria-describedby");
      });
    });
  }
})();
