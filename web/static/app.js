// CPQ Portal behaviour. Our own small script, loaded with `defer` after htmx.
// The CSP forbids inline script and eval, so every behaviour is wired here from data attributes
// and htmx events; never use hx-on (it needs eval) or inline handlers.
//
// Conventions (see web/templates/components and internal/handlers):
//   - toasts: the server appends components.Toast fragments to #toasts (out-of-band swap), or sends
//     `HX-Trigger: {"showToast": {"level": "success", "message": "...", "requestId": "..."}}`.
//   - announcements for screen readers: `HX-Trigger: {"announce": "Customer list updated"}`.
//   - `data-confirm="Delete?"` on a plain (non-htmx) form asks before submitting; htmx elements use hx-confirm,
//     or `data-confirm-url` when the question must state the facts as they are when the person acts.
//   - after a full page load the focus is on `main h1` (unless a #fragment or autofocus says otherwise).
//   - plain forms disable their submit buttons while submitting; htmx forms use hx-disabled-elt.
//   - `[data-autofocus]` in swapped content gets focus; an error summary gets focus when it appears.
//   - `/` focuses the page's search input (`[data-search]` or input[type=search]).
//   - upload progress: `<progress data-upload-progress>` inside an htmx form follows htmx:xhr:progress.
//   - `[data-select-all="name"]` on a checkbox ticks every checkbox of that name in its form.
// portalText is a message in the page's language: <body data-i18n> holds the js.* messages the
// server translated (keys without "js."), {1}, {2} standing for the arguments.
var portalMessages;
function portalText(key) {
  if (!portalMessages) {
    try { portalMessages = JSON.parse(document.body.getAttribute("data-i18n") || "{}"); } catch (e) { portalMessages = {}; }
  }
  var args = arguments;
  return String(portalMessages[key] || key).replace(/\{(\d)\}/g, function (m, i) { return String(args[i]); });
}

// [data-without-script] marks a control only needed without this script (the submit button of a
// select that applies on change): it is hidden once the script runs, so nobody presses it twice.
document.documentElement.classList.add("has-script");

(function () {
  "use strict";

  var TOAST_TIMEOUT_MS = 6000; // success/info toasts go away by themselves; warnings and errors stay

  function toastRegion() {
    return document.getElementById("toasts");
  }

  // announce puts a message into the polite live region for screen readers.
  function announce(message) {
    var region = document.getElementById("announcer");
    if (!region || !message) return;
    region.textContent = "";
    // A new text node after a tick makes screen readers read repeated messages too.
    window.setTimeout(function () { region.textContent = String(message); }, 50);
  }

  // showToast builds the same markup as components.Toast, setting text with textContent only.
  function showToast(detail) {
    var region = toastRegion();
    if (!region || !detail) return;
    var level = ["info", "success", "warning", "error"].indexOf(detail.level) >= 0 ? detail.level : "info";
    var toast = document.createElement("div");
    toast.className = "toast toast--" + level;
    toast.setAttribute("role", level === "error" ? "alert" : "status");
    toast.setAttribute("data-testid", "toast");
    toast.setAttribute("data-level", level);
    var body = document.createElement("div");
    body.className = "toast__body";
    body.textContent = String(detail.message || "");
    if (detail.requestId) {
      var meta = document.createElement("span");
      meta.className = "toast__meta";
      meta.textContent = portalText("request_id", String(detail.requestId));
      body.appendChild(meta);
    }
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast__close";
    close.setAttribute("data-dismiss", "toast");
    close.setAttribute("aria-label", portalText("dismiss"));
    close.textContent = "\u00d7";
    toast.appendChild(body);
    toast.appendChild(close);
    region.appendChild(toast);
    armToast(toast);
  }

  // armToast schedules removal of transient toasts.
  function armToast(toast) {
    if (toast.dataset.armed) return;
    toast.dataset.armed = "1";
    var level = toast.getAttribute("data-level");
    if (level === "success" || level === "info") {
      window.setTimeout(function () { toast.remove(); }, TOAST_TIMEOUT_MS);
    }
  }

  function armToastsIn(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll(".toast").forEach(armToast);
  }

  // focusIn gives focus to the first [data-autofocus] element or an error summary in root.
  function focusIn(root) {
    if (!root || !root.querySelector) return;
    var target = root.querySelector(".error-summary") || root.querySelector("[data-autofocus]");
    if (!target) return;
    if (!target.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) {
      target.setAttribute("tabindex", "-1");
    }
    target.focus();
  }

  document.addEventListener("click", function (event) {
    var dismiss = event.target.closest && event.target.closest("[data-dismiss='toast']");
    if (dismiss) {
      var toast = dismiss.closest(".toast");
      if (toast) toast.remove();
      return;
    }
    // Links to #field-id from the error summary: focus the field, not just scroll to it.
    var link = event.target.closest && event.target.closest(".error-summary a[href^='#']");
    if (link) {
      var field = document.getElementById(link.getAttribute("href").slice(1));
      if (field) {
        event.preventDefault();
        field.focus();
        field.scrollIntoView({ block: "center" });
      }
    }
  });

  // Plain forms: confirm, then disable submit buttons while the browser submits.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || isHtmxElement(form)) return;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
      return;
    }
    // A form whose answer opens in another tab (the offer's preview) leaves this page as it was.
    var target = (event.submitter && event.submitter.getAttribute("formtarget")) || form.getAttribute("target") || "";
    if (target === "_blank") return;
    // After this tick, so the clicked button's name/value is still submitted.
    window.setTimeout(function () {
      form.querySelectorAll("button[type=submit], button:not([type]), input[type=submit]").forEach(function (b) {
        b.disabled = true;
        b.setAttribute("aria-disabled", "true");
      });
      form.setAttribute("aria-busy", "true");
    }, 0);
  });

  // Back/forward cache restores a page with disabled buttons: re-enable them.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    document.querySelectorAll("form[aria-busy='true']").forEach(function (form) {
      form.removeAttribute("aria-busy");
      form.querySelectorAll("[aria-disabled='true']").forEach(function (b) {
        b.disabled = false;
        b.removeAttribute("aria-disabled");
      });
    });
  });

  function isHtmxElement(el) {
    return ["hx-get", "hx-post", "hx-put", "hx-patch", "hx-delete"].some(function (a) { return el.hasAttribute(a); });
  }

  // "/" focuses the search field unless the user is typing somewhere.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var active = document.activeElement;
    if (active && (/^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName) || active.isContentEditable)) return;
    var search = document.querySelector("[data-search]") || document.querySelector("main input[type=search]");
    if (!search) return;
    event.preventDefault();
    search.focus();
    if (search.select) search.select();
  });

  // Server-sent events via HX-Trigger (they bubble from the triggering element to document).
  document.addEventListener("showToast", function (event) { showToast(event.detail); });
  document.addEventListener("announce", function (event) {
    var d = event.detail;
    announce(d && typeof d === "object" ? d.value || d.message : d);
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    armToastsIn(toastRegion());
    focusIn(event.detail && event.detail.target);
  });
  document.addEventListener("htmx:oobAfterSwap", function () { armToastsIn(toastRegion()); });

  // Network failure (no response at all): htmx swaps nothing, so say it.
  document.addEventListener("htmx:sendError", function () {
    showToast({ level: "error", message: portalText("unreachable") });
  });

  // Upload progress (htmx 2 uses XMLHttpRequest, which reports upload progress).
  document.addEventListener("htmx:xhr:progress", function (event) {
    var elt = event.target;
    var form = elt.closest ? elt.closest("form") || elt : elt;
    var bar = form.querySelector && form.querySelector("progress[data-upload-progress]");
    if (!bar || !event.detail || !event.detail.lengthComputable) return;
    bar.max = 100;
    bar.value = Math.round((event.detail.loaded / event.detail.total) * 100);
    bar.textContent = bar.value + "%";
  });

  // After a full page load the focus is on the page's main heading (h1, tabindex="-1"), so a
  // keyboard or screen reader user starts at the page's title, not at the body; never when the
  // address names a #fragment, an element has autofocus or focusIn found something to focus, and
  // without scrolling (the page stays where the browser put it).
  function focusHeading() {
    if (window.location.hash || document.querySelector("[autofocus]")) return;
    if (document.activeElement && document.activeElement !== document.body) return;
    var heading = document.querySelector("main h1");
    if (!heading) return;
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: true });
  }

  // [data-select-all="name"] (a checkbox, e.g. "Select all on this page" of the contracts list)
  // ticks or unticks every checkbox named name in its form; unticking one of them unticks it, so
  // what is sent is what is shown (the server takes the whole page while it is ticked).
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box || box.type !== "checkbox" || !box.form) return;
    var name = box.getAttribute("data-select-all");
    if (name) {
      box.form.querySelectorAll("input[type=checkbox][name='" + name + "']").forEach(function (b) { b.checked = box.checked; });
      return;
    }
    if (!box.checked) {
      box.form.querySelectorAll("input[data-select-all='" + box.name + "']").forEach(function (all) { all.checked = false; });
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    armToastsIn(toastRegion());
    focusIn(document.querySelector("main"));
    focusHeading();
  });

  // [data-confirm-url] on an htmx element: the question asked before its request is read from that
  // address when the person acts ({"question", "state", "refused", "unasked"}, read fresh from the
  // v2 API), never the one rendered with the page, which another tab's change may have outdated.
  // A form's text fields go along in the query, so the question names what was typed. The state
  // it describes goes into the element's [data-confirmed] input, so the server acts only on what
  // was confirmed (internal/handlers/contract_generate_confirm.go); "refused" means there is
  // nothing left to do, and the question says why; "unasked" that the request's own checks
  // answer what was typed (it is sent without a question). When the read fails, nothing is sent.
  function confirmAddress(elt, url) {
    if (!(elt instanceof HTMLFormElement)) return url;
    var query = new URLSearchParams();
    new FormData(elt).forEach(function (value, name) {
      if (typeof value === "string") query.append(name, value);
    });
    var text = query.toString();
    return text ? url + (url.indexOf("?") < 0 ? "?" : "&") + text : url;
  }
  document.addEventListener("htmx:confirm", function (event) {
    var d = event.detail;
    var elt = d && d.elt;
    var url = elt && elt.getAttribute && elt.getAttribute("data-confirm-url");
    if (!url) return;
    event.preventDefault();
    // Nothing the page does on its own (a live notice's regions) replaces the element while its
    // question is read and asked: htmx sends nothing for an element no longer in the page, so the
    // person's "yes" would be lost without a word. The hold ends once the request is on its way
    // (htmx:beforeSend, inside issueRequest, then holds the page until the answer is swapped).
    var release = portalWhenQuiet.hold();
    fetch(confirmAddress(elt, url), { credentials: "same-origin", cache: "no-store", headers: { "Accept": "application/json", "HX-Request": "true" } })
      .then(function (resp) {
        if (!resp.ok) throw new Error("confirmation: HTTP " + resp.status);
        return resp.json();
      })
      .then(function (answer) {
        if (answer.refused) {
          window.alert(answer.question);
          return;
        }
        if (!answer.unasked && !window.confirm(answer.question)) return;
        if (!document.body.contains(elt)) throw new Error("confirmation: the element left the page");
        var input = elt.querySelector("[data-confirmed]");
        if (input) input.value = answer.state || "";
        d.issueRequest(true);
      })
      .catch(function () {
        showToast({ level: "error", message: portalText("confirm_failed") });
      })
      .then(release, release);
  });
})();

// ---------------------------------------------------------------------------------------------
// Contracts & documents (web/templates/contracts): attachment uploads and the JSON tree filter.
//   - form[data-upload-form]: drag and drop onto [data-dropzone], the chosen file's name, a check
//     of the file before sending (none, empty, over data-max-bytes: a friendly message in
//     [data-upload-error] instead of a long upload the server refuses with 413), the progress bar
//     shown while sending (the shell's htmx:xhr:progress handler fills it) and [data-upload-status].
//   - input[data-json-filter="#tree"]: filters a components.JSONTree as the user types: keys and
//     values that contain the text are highlighted (.json-match) and their branches opened, entries
//     without a match are hidden; [data-json-filter-count] next to the input says how many matched.
// ---------------------------------------------------------------------------------------------
(function () {
  "use strict";

  function uploadFormOf(el) {
    return el && el.closest ? el.closest("form[data-upload-form]") : null;
  }

  function formatBytes(n) {
    var units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    var i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(n) : n.toFixed(1).replace(/\.0$/, "")) + " " + units[i];
  }

  function setUploadError(form, message) {
    var box = form.querySelector("[data-upload-error]");
    var input = form.querySelector("input[type=file]");
    if (box) {
      box.textContent = message || "";
      box.hidden = !message;
    }
    if (input) {
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  function setUploadStatus(form, text) {
    var status = form.querySelector("[data-upload-status]");
    if (status) status.textContent = text || "";
  }

  function chosenFile(form) {
    var input = form.querySelector("input[type=file]");
    return input && input.files && input.files.length ? input.files[0] : null;
  }

  // fileProblem says why the chosen file cannot be uploaded, or "" (requireFile: "none" is a problem).
  function fileProblem(form, requireFile) {
    var file = chosenFile(form);
    if (!file) return requireFile ? portalText("file_missing") : "";
    if (file.size === 0) return portalText("file_empty", file.name);
    var max = parseInt(form.getAttribute("data-max-bytes"), 10);
    if (max > 0 && file.size > max) {
      return portalText("file_too_large", file.name, formatBytes(file.size), form.getAttribute("data-max-text") || formatBytes(max));
    }
    return "";
  }

  function showChosenFile(form) {
    var file = chosenFile(form);
    var label = form.querySelector("[data-upload-filename]");
    if (label) label.textContent = file ? file.name + " (" + formatBytes(file.size) + ")" : "";
    setUploadError(form, fileProblem(form, false));
    setUploadStatus(form, "");
    var bar = form.querySelector("progress[data-upload-progress]");
    if (bar) bar.hidden = true;
  }

  document.addEventListener("change", function (event) {
    var form = uploadFormOf(event.target);
    if (form && event.target.type === "file") showChosenFile(form);
  });

  // Drag and drop: a dropped file goes into the form's file input, as if chosen with the picker.
  function dropzoneOf(event) {
    return event.target && event.target.closest ? event.target.closest("[data-dropzone]") : null;
  }
  document.addEventListener("dragover", function (event) {
    var zone = dropzoneOf(event);
    if (!zone) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
    zone.classList.add("dropzone--over");
  });
  document.addEventListener("dragleave", function (event) {
    var zone = dropzoneOf(event);
    if (zone && !zone.contains(event.relatedTarget)) zone.classList.remove("dropzone--over");
  });
  document.addEventListener("drop", function (event) {
    var zone = dropzoneOf(event);
    if (!zone) return;
    event.preventDefault();
    zone.classList.remove("dropzone--over");
    var form = uploadFormOf(zone);
    var input = zone.querySelector("input[type=file]");
    var files = event.dataTransfer && event.dataTransfer.files;
    if (!form || !input || !files || !files.length) return;
    if (files.length > 1) {
      setUploadError(form, portalText("drop_one"));
      return;
    }
    var transfer = new DataTransfer();
    transfer.items.add(files[0]);
    input.files = transfer.files;
    showChosenFile(form);
  });

  // Before htmx sends an upload: check the file, then show the progress bar.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = uploadFormOf(event.target);
    if (!form || event.target !== form) return;
    var problem = fileProblem(form, true);
    if (problem) {
      event.preventDefault();
      setUploadError(form, problem);
      var input = form.querySelector("input[type=file]");
      if (input) input.focus();
      return;
    }
    setUploadError(form, "");
    var bar = form.querySelector("progress[data-upload-progress]");
    if (bar) {
      bar.max = 100;
      bar.value = 0;
      bar.textContent = "0%";
      bar.hidden = false;
    }
    setUploadStatus(form, portalText("uploading"));
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = uploadFormOf(event.target);
    if (!form || event.target !== form) return;
    var ok = event.detail && event.detail.successful;
    var bar = form.querySelector("progress[data-upload-progress]");
    if (ok) {
      if (bar) {
        bar.value = 100;
        bar.textContent = "100%";
      }
      setUploadStatus(form, portalText("uploaded"));
      var input = form.querySelector("input[type=file]");
      if (input) input.value = "";
      var label = form.querySelector("[data-upload-filename]");
      if (label) label.textContent = "";
    } else {
      setUploadStatus(form, portalText("upload_failed"));
    }
  });

  // JSON tree filter.
  function applyJSONFilter(input) {
    var tree = document.querySelector(input.getAttribute("data-json-filter"));
    if (!tree) return;
    var query = input.value.trim().toLowerCase();
    tree.querySelectorAll(".json-match").forEach(function (el) { el.classList.remove("json-match"); });
    tree.querySelectorAll("[data-json-keep]").forEach(function (el) { el.removeAttribute("data-json-keep"); });
    tree.querySelectorAll("[data-json-hidden]").forEach(function (el) {
      el.hidden = false;
      el.removeAttribute("data-json-hidden");
    });
    var count = 0;
    if (query) {
      tree.querySelectorAll("dt, .json-string, .json-number, .json-bool, .json-null").forEach(function (el) {
        if (el.textContent.toLowerCase().indexOf(query) < 0) return;
        el.classList.add("json-match");
        count++;
        // A matching key keeps its whole value visible.
        if (el.tagName === "DT" && el.nextElementSibling) el.nextElementSibling.setAttribute("data-json-keep", "");
        for (var d = el.parentElement; d && d !== tree; d = d.parentElement) {
          if (d.tagName === "DETAILS") d.open = true;
        }
      });
      var visible = function (el) {
        return el.classList.contains("json-match") || el.querySelector(".json-match") || el.closest("[data-json-keep]");
      };
      tree.querySelectorAll("dt").forEach(function (dt) {
        var dd = dt.nextElementSibling;
        if (visible(dt) || (dd && visible(dd))) return;
        [dt, dd].forEach(function (el) {
          if (!el) return;
          el.hidden = true;
          el.setAttribute("data-json-hidden", "");
        });
      });
      tree.querySelectorAll("li").forEach(function (li) {
        if (visible(li)) return;
        li.hidden = true;
        li.setAttribute("data-json-hidden", "");
      });
    }
    var counter = input.parentElement && input.parentElement.querySelector("[data-json-filter-count]");
    if (counter) counter.textContent = !query ? "" : count === 0 ? portalText("matches_none") : count === 1 ? portalText("matches_one") : portalText("matches", count);
  }

  var filterTimer = null;
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-json-filter]")) return;
    window.clearTimeout(filterTimer);
    filterTimer = window.setTimeout(function () { applyJSONFilter(input); }, 120);
  });
  // Enter in the filter must not submit anything.
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.matches && event.target.matches("input[data-json-filter]")) {
      event.preventDefault();
      applyJSONFilter(event.target);
    }
  });
})();

// ---------------------------------------------------------------------------------------------
// Quotes (web/templates/quotes).
//   - [data-quote-search]: Enter searches (the "search" event) instead of submitting the form.
//   - [data-quote-focus] in swapped content gets keyboard focus once (a panel's first choice, the
//     cart heading after an item was removed, the "Restart session" button).
//   - what changed: before the answer of an action (not a GET) is swapped into a quote page, the
//     previous action's highlights (.is-changed, .is-new, [data-change-note]) are cleared, so only
//     what the new answer marks is highlighted (internal/handlers/quote_digest.go).
//   - [data-quote-close] empties the panel it is in and gives focus back to its line or section.
//   - select[data-choose] applies on an explicit choice only, never while moving with the arrow keys.
// ---------------------------------------------------------------------------------------------
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (event.key !== "Enter" || !input.matches || !input.matches("[data-quote-search]")) return;
    event.preventDefault();
    input.dispatchEvent(new Event("search", { bubbles: true }));
  });

  // select[data-choose] (the price list) applies only on an explicit choice (its form's hx-trigger
  // is "submit, choose"): a pick with the mouse, Enter, or the form's button. Moving through the
  // closed menu with the arrow keys (or Home, End, a letter) changes the select's value at once in
  // most browsers, and that is not a choice: the form is then marked [data-choosing], which shows
  // its button, and nothing is sent until Enter or the button.
  var movedAt = new WeakMap();
  var movingKeys = /^(ArrowUp|ArrowDown|ArrowLeft|ArrowRight|Home|End|PageUp|PageDown)$/;
  function choose(select) {
    var form = select.form;
    if (!form) return;
    form.removeAttribute("data-choosing");
    if (window.htmx) window.htmx.trigger(form, "choose");
  }
  document.addEventListener("keydown", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-choose]")) return;
    if (event.key === "Enter") {
      if (select.form && select.form.hasAttribute("data-choosing")) {
        event.preventDefault();
        choose(select);
      }
      return;
    }
    if (!event.altKey && !event.ctrlKey && !event.metaKey && (movingKeys.test(event.key) || event.key.length === 1 && event.key !== " ")) {
      movedAt.set(select, Date.now());
    }
  }, true);
  document.addEventListener("pointerdown", function (event) {
    var select = event.target.closest && event.target.closest("select[data-choose]");
    if (select) movedAt.delete(select);
  }, true);
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-choose]")) return;
    var moved = movedAt.get(select);
    movedAt.delete(select);
    if (moved && Date.now() - moved < 1000) {
      if (select.form) select.form.setAttribute("data-choosing", "");
      return;
    }
    choose(select);
  });

  document.addEventListener("htmx:afterSettle", function () {
    var target = document.querySelector("[data-quote-focus]");
    if (!target) return;
    target.removeAttribute("data-quote-focus");
    if (!target.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) {
      target.setAttribute("tabindex", "-1");
    }
    target.focus();
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var d = event.detail;
    var page = document.querySelector("[data-quote-page]");
    if (!page || !d || !d.xhr || d.xhr.status >= 300) return;
    var verb = d.requestConfig && d.requestConfig.verb;
    if (!verb || verb === "get") return;
    page.querySelectorAll("[data-change-note]").forEach(function (el) { el.remove(); });
    page.querySelectorAll(".is-changed, .is-new").forEach(function (el) {
      el.classList.remove("is-changed", "is-new");
    });
  });

  document.addEventListener("click", function (event) {
    var close = event.target.closest && event.target.closest("[data-quote-close]");
    if (!close) return;
    var panel = close.closest(".panel");
    var slot = panel && panel.parentElement;
    if (!slot) return;
    var scope = slot.closest("tr") || slot.closest("section");
    if (scope && scope.classList.contains("line-panel-row")) scope = scope.previousElementSibling; // its line
    slot.textContent = "";
    var back = scope && scope.querySelector("button");
    if (back) back.focus();
  });
})();

// ---------------------------------------------------------------------------------------------
// Speed of use and accessibility (web/templates/palette, docs/accessibility.md).
//   - Command palette: Ctrl/Cmd+K anywhere, the header's [data-palette-open] "Go to" link, or "/"
//     on a page without a search field opens <dialog id="palette"> (showModal). Its input is an
//     ARIA combobox: htmx fetches GET /palette?q= into #palette-results (debounced 200 ms, or at
//     once on the "palette-refresh" event); ArrowDown/ArrowUp move aria-activedescendant over the
//     listbox's options, Enter opens the active one (or, when the results are not yet those of
//     the text typed, the first result as soon as they arrive), Escape closes, and focus goes back
//     to whatever had it before. #palette-status announces the number of results.
//   - Drafts: form[data-draft="name"] keeps what the user types in sessionStorage ("cpq-draft:"
//     + name, this tab only) and restores it when the form is loaded again untouched (e.g. after
//     signing in again when the session had expired), with a notice and a "Discard" button. The
//     draft is cleared when an htmx submit succeeded (2xx, not a redirect to sign-in, and the form
//     is gone or the answer redirects), or when a page carries [data-draft-clear="name"].
//     Hidden, password and file inputs, and [data-draft-skip] fields, are never stored.
//   - Focus after swaps: when an htmx swap removed the focused element, the focus goes to the same
//     control in the new content, else its first heading, else the region (never back to <body>).
//   - Tables: a table.responsive wider than its .table-wrap becomes cards (.is-collapsed), so a
//     tablet never scrolls a table sideways.
// ---------------------------------------------------------------------------------------------
(function () {
  "use strict";

  // ----- Command palette -----
  var opener = null;        // the element focused before the palette opened
  var pendingEnter = false; // Enter was pressed before the results of the typed text arrived

  function paletteDialog() { return document.getElementById("palette"); }
  function paletteInput() { return document.getElementById("palette-input"); }
  function paletteOptions() {
    var d = paletteDialog();
    return d ? Array.prototype.slice.call(d.querySelectorAll("#palette-listbox [role=option]")) : [];
  }
  function paletteFound() {
    var d = paletteDialog();
    return d ? d.querySelector("[data-palette-found]") : null;
  }

  function isTyping(el) {
    return !!el && (/^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName) || el.isContentEditable);
  }

  function refreshPalette() {
    var input = paletteInput();
    if (input && window.htmx) window.htmx.trigger(input, "palette-refresh");
  }

  function openPalette(from) {
    var dialog = paletteDialog();
    var input = paletteInput();
    if (!dialog || !input || typeof dialog.showModal !== "function") return false;
    if (!dialog.open) {
      opener = from || document.activeElement;
      dialog.showModal();
      refreshPalette(); // empty text: the recent quotes and the pages
    }
    input.focus();
    input.select();
    return true;
  }

  function setActive(index) {
    var input = paletteInput();
    var options = paletteOptions();
    if (!input) return;
    options.forEach(function (option, i) {
      option.setAttribute("aria-selected", i === index ? "true" : "false");
      option.classList.toggle("is-active", i === index);
    });
    if (index >= 0 && index < options.length) {
      input.setAttribute("aria-activedescendant", options[index].id);
      options[index].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function activeIndex() {
    var input = paletteInput();
    var id = input && input.getAttribute("aria-activedescendant");
    if (!id) return -1;
    return paletteOptions().findIndex(function (option) { return option.id === id; });
  }

  // resultsAreCurrent: the listbox shows the results of the text now in the input.
  function resultsAreCurrent() {
    var found = paletteFound();
    var input = paletteInput();
    return !!found && !!input && found.getAttribute("data-query") === input.value.trim();
  }

  function openOption(option) {
    var href = option && option.getAttribute("data-href");
    // Only the portal's own paths (the server builds them; this is a second guard).
    if (!href || href.charAt(0) !== "/" || href.charAt(1) === "/" || href.charAt(1) === "\\") return;
    window.location.assign(href);
  }

  function announceStatus(text) {
    var status = document.getElementById("palette-status");
    if (!status) return;
    status.textContent = "";
    window.setTimeout(function () { status.textContent = text || ""; }, 50);
  }

  document.addEventListener("keydown", function (event) {
    // Ctrl/Cmd+K anywhere, even while typing in a field.
    if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && (event.key === "k" || event.key === "K")) {
      if (openPalette()) event.preventDefault();
      return;
    }
    // "/" on a page without a search field (the shell's handler took it when there is one).
    if (event.key === "/" && !event.defaultPrevented && !event.ctrlKey && !event.metaKey && !event.altKey &&
        !isTyping(document.activeElement)) {
      var dialog = paletteDialog();
      if (dialog && !dialog.open && openPalette()) event.preventDefault();
    }
  });

  document.addEventListener("keydown", function (event) {
    var input = paletteInput();
    if (!input || event.target !== input) return;
    var options = paletteOptions();
    var i = activeIndex();
    switch (event.key) {
      case "ArrowDown":
        event.preventDefault();
        if (options.length) setActive(i < 0 || i >= options.length - 1 ? 0 : i + 1);
        break;
      case "ArrowUp":
        event.preventDefault();
        if (options.length) setActive(i <= 0 ? options.length - 1 : i - 1);
        break;
      case "Enter":
        event.preventDefault(); // never the form's own submit: that is the no-script page
        if (resultsAreCurrent()) {
          if (options.length) openOption(options[i < 0 ? 0 : i]);
        } else {
          pendingEnter = true;
          refreshPalette();
        }
        break;
    }
  });

  // The header's "Go to" link opens the dialog (the link itself is the no-script fallback).
  document.addEventListener("click", function (event) {
    var trigger = event.target.closest && event.target.closest("[data-palette-open]");
    if (trigger) {
      if (openPalette(trigger)) event.preventDefault();
      return;
    }
    if (event.target.closest && event.target.closest("#palette [data-palette-close]")) {
      paletteDialog().close();
      return;
    }
    var option = event.target.closest && event.target.closest("#palette [role=option]");
    if (option) {
      openOption(option);
      return;
    }
    // A click on the backdrop (outside the dialog's box) closes it.
    var dialog = paletteDialog();
    if (dialog && dialog.open && event.target === dialog) {
      var box = dialog.getBoundingClientRect();
      if (event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom) {
        dialog.close();
      }
    }
  });

  document.addEventListener("mousemove", function (event) {
    var option = event.target.closest && event.target.closest("#palette [role=option]");
    if (!option) return;
    var index = paletteOptions().indexOf(option);
    if (index >= 0 && index !== activeIndex()) setActive(index);
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "palette-results") return;
    var input = paletteInput();
    var found = paletteFound();
    var count = found ? parseInt(found.getAttribute("data-count"), 10) || 0 : 0;
    if (input) input.setAttribute("aria-expanded", count > 0 ? "true" : "false");
    setActive(count > 0 ? 0 : -1);
    announceStatus(found ? found.getAttribute("data-summary") : "");
    if (pendingEnter && resultsAreCurrent()) {
      pendingEnter = false;
      if (count > 0) openOption(paletteOptions()[0]);
    }
  });

  // Closing (Escape, the Esc button, the backdrop): start afresh next time, focus back.
  function onPaletteClose() {
    var input = paletteInput();
    var results = document.getElementById("palette-results");
    pendingEnter = false;
    if (input) {
      input.value = "";
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }
    if (results) results.textContent = "";
    announceStatus("");
    var back = opener && opener.isConnected && opener !== document.body ? opener : document.getElementById("palette-trigger");
    opener = null;
    if (back && back.focus) back.focus();
  }

  function initPalette() {
    var dialog = paletteDialog();
    if (dialog && !dialog.dataset.paletteReady) {
      dialog.dataset.paletteReady = "1";
      dialog.addEventListener("close", onPaletteClose);
    }
    if (/Mac|iPhone|iPad/.test(navigator.platform || "")) {
      document.querySelectorAll("[data-palette-keys]").forEach(function (k) { k.textContent = "\u2318 K"; });
    }
  }

  // ----- Drafts of long forms (sessionStorage) -----
  var DRAFT_PREFIX = "cpq-draft:";
  var draftTimers = {};
  // submitted: drafts whose form was sent from this page. The form the server sends back (e.g.
  // with validation errors) already holds the user's input: it is not "restored" over it.
  var submitted = {};
  var draftRequests = new WeakMap(); // request (XMLHttpRequest) -> draft name of the form it sends

  function storage() {
    try {
      return window.sessionStorage;
    } catch (e) {
      return null; // storage disabled: drafts are simply not kept
    }
  }

  function draftKey(form) { return DRAFT_PREFIX + form.getAttribute("data-draft"); }

  function draftFields(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      if (!el.name || el.disabled || el.hasAttribute("data-draft-skip")) return false;
      if (/^(BUTTON|FIELDSET|OUTPUT|OBJECT)$/.test(el.tagName)) return false;
      return ["hidden", "password", "file", "submit", "button", "reset", "image"].indexOf((el.type || "").toLowerCase()) < 0;
    });
  }

  function isCheckable(el) { return el.type === "checkbox" || el.type === "radio"; }

  // readDraft: every field's value(s) by name, in document order.
  function readDraft(form) {
    var values = {};
    draftFields(form).forEach(function (el) {
      var list = values[el.name] || (values[el.name] = []);
      if (isCheckable(el)) {
        if (el.checked) list.push(el.value);
      } else if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.selectedOptions, function (o) { list.push(o.value); });
      } else {
        list.push(el.value);
      }
    });
    return values;
  }

  function writeDraft(form, values) {
    var seen = {};
    draftFields(form).forEach(function (el) {
      var list = values[el.name];
      if (!Array.isArray(list)) return;
      if (isCheckable(el)) {
        el.checked = list.indexOf(el.value) >= 0;
      } else if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.options, function (o) { o.selected = list.indexOf(o.value) >= 0; });
      } else {
        var n = seen[el.name] || 0;
        seen[el.name] = n + 1;
        if (typeof list[n] === "string") el.value = list[n];
      }
    });
  }

  // pristine: nothing changed since the server rendered the form.
  function pristine(form) {
    return draftFields(form).every(function (el) {
      if (isCheckable(el)) return el.checked === el.defaultChecked;
      if (el.tagName === "SELECT") {
        return Array.prototype.every.call(el.options, function (o) { return o.selected === o.defaultSelected; }) ||
          el.selectedIndex === 0 && !Array.prototype.some.call(el.options, function (o) { return o.defaultSelected; });
      }
      return el.value === el.defaultValue;
    });
  }

  function saveDraft(form) {
    var store = storage();
    if (!store) return;
    try {
      store.setItem(draftKey(form), JSON.stringify({ savedAt: Date.now(), values: readDraft(form) }));
    } catch (e) { /* quota: keep working without a draft */ }
  }

  function loadDraft(name) {
    var store = storage();
    if (!store) return null;
    try {
      var draft = JSON.parse(store.getItem(DRAFT_PREFIX + name) || "null");
      return draft && typeof draft.values === "object" ? draft : null;
    } catch (e) {
      return null;
    }
  }

  function clearDraft(name) {
    var store = storage();
    if (store) store.removeItem(DRAFT_PREFIX + name);
  }

  function draftNotice(form, savedAt) {
    var notice = document.createElement("div");
    notice.className = "notice draft-notice";
    notice.setAttribute("role", "status");
    notice.setAttribute("data-testid", "draft-notice");
    var when = new Date(savedAt);
    var text = document.createElement("span");
    text.textContent = (isNaN(when.getTime()) ? portalText("draft_restored")
      : portalText("draft_restored_at", when.toLocaleTimeString(document.documentElement.lang || [], { hour: "2-digit", minute: "2-digit" }))) + " ";
    var discard = document.createElement("button");
    discard.type = "button";
    discard.className = "button--link";
    discard.setAttribute("data-draft-discard", "");
    discard.setAttribute("data-testid", "draft-discard");
    discard.textContent = portalText("draft_discard");
    notice.appendChild(text);
    notice.appendChild(discard);
    form.insertBefore(notice, form.firstChild);
  }

  function restoreDraft(form) {
    if (form.dataset.draftReady) return;
    form.dataset.draftReady = "1";
    var name = form.getAttribute("data-draft");
    if (submitted[name]) {
      saveDraft(form); // what the server kept of the input is the draft now
      return;
    }
    var draft = name && loadDraft(name);
    if (!draft || !pristine(form)) return;
    if (JSON.stringify(readDraft(form)) === JSON.stringify(draft.values)) return;
    writeDraft(form, draft.values);
    draftNotice(form, draft.savedAt);
  }

  function initDrafts(root) {
    if (!root || !root.querySelectorAll) return;
    document.querySelectorAll("[data-draft-clear]").forEach(function (el) {
      el.getAttribute("data-draft-clear").split(/\s+/).forEach(function (name) { if (name) clearDraft(name); });
    });
    var forms = Array.prototype.slice.call(root.querySelectorAll("form[data-draft]"));
    if (root.matches && root.matches("form[data-draft]")) forms.push(root);
    forms.forEach(restoreDraft);
  }

  // Typing saves 250 ms after the last key; leaving a field (change), sending the form and leaving
  // the page save at once, so nothing typed is lost to a sign-in redirect.
  function onDraftInput(event) {
    var form = event.target && event.target.form;
    if (!form || !form.hasAttribute || !form.hasAttribute("data-draft")) return;
    var key = draftKey(form);
    window.clearTimeout(draftTimers[key]);
    if (event.type === "change") {
      saveDraft(form);
      return;
    }
    draftTimers[key] = window.setTimeout(function () { saveDraft(form); }, 250);
  }
  document.addEventListener("input", onDraftInput);
  document.addEventListener("change", onDraftInput);
  window.addEventListener("pagehide", function () {
    document.querySelectorAll("form[data-draft]").forEach(function (form) {
      if (draftTimers[draftKey(form)] && !pristine(form)) saveDraft(form);
    });
  });

  document.addEventListener("click", function (event) {
    var discard = event.target.closest && event.target.closest("[data-draft-discard]");
    if (!discard) return;
    var form = discard.closest("form[data-draft]");
    if (!form) return;
    clearDraft(form.getAttribute("data-draft"));
    var notice = discard.closest(".draft-notice");
    form.reset();
    if (notice) notice.remove();
    var first = draftFields(form)[0];
    if (first) first.focus();
    document.dispatchEvent(new CustomEvent("announce", { detail: portalText("draft_discarded") }));
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var d = event.detail;
    var form = d && d.elt && d.elt.closest ? d.elt.closest("form[data-draft]") : null;
    var verb = d && d.requestConfig && d.requestConfig.verb;
    if (form && (d.elt === form || (verb && verb !== "get"))) {
      submitted[form.getAttribute("data-draft")] = true;
      // The answer's events may name another element (htmx fires them on the nearest element
      // still in the page when the form was swapped away): remember the request instead.
      if (d.xhr) draftRequests.set(d.xhr, form.getAttribute("data-draft"));
      window.clearTimeout(draftTimers[draftKey(form)]);
      saveDraft(form); // what is sent is the draft, until the answer says it was saved
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var d = event.detail;
    var name = d && d.xhr ? draftRequests.get(d.xhr) : null;
    if (!name) return;
    draftRequests.delete(d.xhr);
    if (!d.successful) return;
    var redirect = d.xhr.getResponseHeader("HX-Redirect") || d.xhr.getResponseHeader("HX-Location") || "";
    if (redirect.indexOf("/auth/") >= 0) return; // the session expired: keep the draft for after signing in
    var stillThere = Array.prototype.some.call(document.querySelectorAll("form[data-draft]"), function (f) {
      return f.getAttribute("data-draft") === name;
    });
    if (redirect || !stillThere) {
      window.clearTimeout(draftTimers[DRAFT_PREFIX + name]);
      clearDraft(name);
    }
  });

  // ----- Focus after an htmx swap -----
  // When a swap removes the element that had the focus (a sort link, the submit button of a form
  // replaced by the saved record's page), the focus would fall back to <body> and a keyboard or
  // screen-reader user would have to start again from the top. After the swap has settled (and the
  // shell's and areas' own focus rules had their turn), the focus goes to the same control in the
  // new content (same id, or same data-testid at the same position), else to the new content's
  // first heading, else to the swapped region itself.
  var lostFocus = null;
  var focusAtRequest = null; // a button disabled while its request runs (hx-disabled-elt) may drop the focus
  document.addEventListener("htmx:beforeRequest", function () { focusAtRequest = document.activeElement; });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail && event.detail.target;
    var active = document.activeElement;
    if (!active || active === document.body) active = focusAtRequest;
    lostFocus = null;
    if (!target || !active || active === document.body || !target.contains(active)) return;
    var testid = active.getAttribute("data-testid");
    var index = testid ? Array.prototype.indexOf.call(target.querySelectorAll("[data-testid=\"" + CSS.escape(testid) + "\"]"), active) : -1;
    lostFocus = { target: target, targetId: target.id, id: active.id, testid: testid, index: index };
  });

  function focusable(el) {
    if (!el.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA|SUMMARY)$/.test(el.tagName)) el.setAttribute("tabindex", "-1");
    return el;
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var lost = lostFocus;
    var settled = event.target;
    // Out-of-band swaps (toasts) settle too: only the region that held the focus counts.
    if (!lost || !settled || !settled.isConnected || (settled.closest && settled.closest("#toasts"))) return;
    if (lost.target.isConnected && !(settled === lost.target || lost.target.contains(settled) || settled.contains(lost.target))) return;
    // A region replaced whole (outerHTML) is gone: only its replacement (same id) counts, not a
    // region swapped out of band beside it (the saved views that follow a list's filters).
    if (!lost.target.isConnected && lost.targetId && settled.id !== lost.targetId &&
        !(settled.querySelector && settled.querySelector("#" + CSS.escape(lost.targetId)))) return;
    lostFocus = null;
    var active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    var region = lost.target.isConnected ? lost.target : settled;
    var next = null;
    if (lost.id) next = document.getElementById(lost.id);
    if (!next && lost.testid) {
      var same = region.querySelectorAll("[data-testid=\"" + CSS.escape(lost.testid) + "\"]");
      next = same[Math.max(0, Math.min(lost.index, same.length - 1))] || null;
    }
    if (next && (next.disabled || next.offsetParent === null)) next = null;
    if (!next) next = region.querySelector("h1, h2, h3") || region;
    focusable(next).focus();
  });

  // ----- Tables that do not fit become cards -----
  // A table.responsive inside .table-wrap that is wider than its wrapper (a tablet in portrait, a
  // narrow window) gets .is-collapsed on the wrapper: app.css shows each row as a card labelled
  // from data-label, as on phones, instead of making the user scroll the table sideways.
  function fitTables() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      var table = wrap.querySelector("table.responsive");
      if (!table) return;
      wrap.classList.remove("is-collapsed");
      if (wrap.clientWidth > 0 && table.scrollWidth > wrap.clientWidth + 1) wrap.classList.add("is-collapsed");
    });
  }
  var fitTimer = null;
  window.addEventListener("resize", function () {
    window.clearTimeout(fitTimer);
    fitTimer = window.setTimeout(fitTables, 100);
  });
  // Printed tables keep their columns (the print stylesheet has the page's full width).
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll(".table-wrap.is-collapsed").forEach(function (wrap) { wrap.classList.remove("is-collapsed"); });
  });
  window.addEventListener("afterprint", fitTables);
  document.addEventListener("htmx:afterSettle", fitTables);

  document.addEventListener("htmx:load", function (event) { initDrafts(event.target); });
  document.addEventListener("DOMContentLoaded", function () {
    initPalette();
    initDrafts(document);
    fitTables();
  });
})();

// ---------------------------------------------------------------------------------------------
// Quiet moments (issue 26, "a click that sends nothing"): portalWhenQuiet(fn) runs fn at once, or,
// while a pointer is pressed or an htmx request of this page is on its way, just after both are
// over (after the click that ends the press has been handled, after the answer has been swapped).
// Whatever changes the page on its own (the live notice's poll) goes through it, so nothing moves
// or is replaced between a person's press and release (the release would land elsewhere and the
// click would not happen), and a notice is judged against the page after the person's own action
// has been answered (their own change is not a colleague's).
// ---------------------------------------------------------------------------------------------
var portalWhenQuiet = (function () {
  "use strict";
  var pressed = false;
  var inflight = new Set();
  var waiting = [];

  var holds = 0; // hold(): a confirmation being read or asked (the [data-confirm-url] handler)

  function quiet() { return !pressed && inflight.size === 0 && holds === 0; }
  function flush() {
    if (!quiet()) return;
    var run = waiting;
    waiting = [];
    run.forEach(function (fn) { try { fn(); } catch (e) { /* one failing job must not stop the others */ } });
  }
  // The click event follows pointerup in the same input task: flush on the next task, after it.
  function later() { window.setTimeout(flush, 0); }

  document.addEventListener("pointerdown", function (event) {
    if (event.isPrimary !== false) pressed = true;
  }, { capture: true, passive: true });
  ["pointerup", "pointercancel"].forEach(function (type) {
    window.addEventListener(type, function () { pressed = false; later(); }, { capture: true, passive: true });
  });
  window.addEventListener("blur", function () { pressed = false; later(); });
  // loadend comes after htmx's load handler (the swap, htmx:afterRequest), and after errors and aborts.
  document.addEventListener("htmx:beforeSend", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (!xhr || inflight.has(xhr)) return;
    inflight.add(xhr);
    xhr.addEventListener("loadend", function () { inflight.delete(xhr); later(); });
  });

  // A press or a request that never ends (a pointerup lost outside the window, a hung request) holds
  // nothing longer than MAX_HOLD_MS.
  var MAX_HOLD_MS = 10000;
  var whenQuiet = function (fn) {
    if (quiet()) { fn(); return; }
    var done = false;
    var once = function () { if (!done) { done = true; fn(); } };
    waiting.push(once);
    window.setTimeout(once, MAX_HOLD_MS);
  };
  // hold keeps the page "not quiet" until the returned function is called (once counts).
  whenQuiet.hold = function () {
    holds++;
    var released = false;
    return function () {
      if (released) return;
      released = true;
      holds--;
      later();
    };
  };
  return whenQuiet;
})();

// Live notices (docs/quotes.md): [data-live-poll] polls with If-None-Match (304: nothing new; 200:
// a polite banner, focus untouched), backs off on errors and while hidden or idle, stops when the
// session ends. Cost (issue 27, docs/performance.md): an active page polls every 1.5 s (the portal
// reads the v2 API at most once per 2 s per quote, so a colleague's change shows within 5 s); a
// page untouched for 2 minutes or in a hidden tab polls once a minute with idle=1 (the portal then
// answers from a read up to a minute old), so it costs at most one v2 read a minute. [data-dismiss-conflict] closes the "quote changed" notice.
(function () {
  "use strict";

  var VISIBLE_MS = 1500;
  var IDLE_AFTER_MS = 2 * 60 * 1000;
  var SLOW_MS = 60000; // idle or hidden
  var MAX_BACKOFF_MS = 60000;
  var IDLE_PAUSE_MS = 15 * 60 * 1000;
  var lastActivity = Date.now();
  var pollers = [];

  function idle() { return document.hidden || Date.now() - lastActivity > IDLE_AFTER_MS; }
  function touched() {
    var wasIdle = idle();
    lastActivity = Date.now();
    pollers.forEach(function (p) { p.resume(wasIdle); });
  }
  ["keydown", "pointerdown", "wheel", "touchstart"].forEach(function (type) {
    document.addEventListener(type, touched, { passive: true, capture: true });
  });

  function stripTag(value) {
    return String(value || "").replace(/^W\//, "").replace(/"/g, "");
  }

  function startPoller(region) {
    var url = region.getAttribute("data-live-poll");
    var tagSelector = region.getAttribute("data-live-tag");
    var slot = region.querySelector("[role=status]") || region;
    var known = "";
    var pageTag = "";
    var failures = 0;
    var timer = null;
    var stopped = false;
    var paused = false;
    var inflight = false;
    // data-live-every (ms) paces a region slower than a page's live notice (the inbox's count).
    var every = parseInt(region.getAttribute("data-live-every"), 10) || VISIBLE_MS;

    function tagElement() { return tagSelector ? document.querySelector(tagSelector) : region; }
    function currentTag() {
      var el = tagElement();
      return el ? el.getAttribute("data-tag") || "" : "";
    }
    function since() {
      var el = tagElement();
      if (el && el.hasAttribute("data-since")) return el.getAttribute("data-since");
      var m = el && /(?:^|;)u=(\d+)/.exec(el.value || "");
      return m ? m[1] : "";
    }
    function schedule(delay) {
      if (stopped) return;
      window.clearTimeout(timer);
      if (delay === undefined) {
        delay = idle() ? Math.max(SLOW_MS, every) : every;
        if (failures > 0) delay = Math.min(MAX_BACKOFF_MS, delay * Math.pow(2, failures));
      }
      timer = window.setTimeout(poll, delay);
    }
    function poll() {
      if (stopped || inflight) return;
      if (!document.body.contains(region)) { stopped = true; return; }
      if (Date.now() - lastActivity > IDLE_PAUSE_MS) { paused = true; return; }
      var tag = currentTag();
      if (tag !== pageTag) { pageTag = tag; known = tag; } // the page itself moved on (an action)
      var s = since();
      var query = [];
      if (s) query.push("since=" + encodeURIComponent(s));
      if (idle()) query.push("idle=1");
      inflight = true;
      window.fetch(url + (query.length ? "?" + query.join("&") : ""), {
        method: "GET",
        credentials: "same-origin",
        cache: "no-store",
        redirect: "manual",
        headers: { "If-None-Match": "\"" + known + "\"", "HX-Request": "true", "Accept": "text/html" }
      }).then(function (resp) {
        if (resp.status === 304) { failures = 0; return null; }
        if (resp.type === "opaqueredirect" || resp.status === 401 || resp.status === 403 || resp.headers.get("HX-Redirect")) {
          stopped = true;
          // The session ended (revoked, signed out elsewhere, expired): say so in the open tab (issue 26).
          if (/[?&]reason=/.test(resp.headers.get("HX-Redirect") || "")) {
            document.dispatchEvent(new CustomEvent("showToast", { detail: { level: "error", message: portalText("session_ended") } }));
          }
          return null;
        }
        if (!resp.ok) { failures++; return null; }
        failures = 0;
        var etag = stripTag(resp.headers.get("ETag"));
        return resp.text().then(function (html) {
          if (etag) known = etag;
          // Not under a press, nor before the person's own action is answered (its X-Live-Tag may
          // say the page already shows this state).
          // data-live-waiting marks a notice held back until then.
          region.setAttribute("data-live-waiting", "");
          portalWhenQuiet(function () {
            region.removeAttribute("data-live-waiting");
            if (etag && etag === currentTag()) return; // the page already shows it
            if (!document.body.contains(slot)) return;
            // Server-rendered and escaped by templ; swapped by htmx (which wires its buttons), never focused.
            // The live region itself stays (a new region would not be announced): emptied, then filled.
            slot.textContent = "";
            if (window.htmx) window.htmx.swap(slot, html, { swapStyle: "beforeend" });
          });
        });
      }).catch(function () {
        failures++;
      }).then(function () {
        inflight = false;
        schedule();
      });
    }
    var poller = {
      // Back from a pause or from the slow idle pace: look now rather than up to a minute later.
      resume: function (wasIdle) {
        if (stopped || inflight) return;
        if (paused || wasIdle) { paused = false; schedule(0); }
      }
    };
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && !stopped && !inflight) schedule(0);
    });
    pollers.push(poller);
    known = pageTag = currentTag();
    // data-live-now: the region is filled by its first poll at once (the page did not render it).
    schedule(region.hasAttribute("data-live-now") ? 0 : undefined);
  }

  function startAll(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("[data-live-poll]").forEach(function (region) {
      if (region.dataset.livePolling) return;
      region.dataset.livePolling = "1";
      startPoller(region);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { startAll(document); });

  // "… ago" in a notice (<time data-ago="seconds at render">) follows the clock (issue 26): counted
  // from when this page received it, so the two machines' clocks never matter.
  function tickAgo() {
    var now = Date.now();
    document.querySelectorAll("time[data-ago]").forEach(function (el) {
      if (!el.dataset.agoBase) el.dataset.agoBase = String(now);
      var s = Math.max(0, Math.floor(parseInt(el.getAttribute("data-ago"), 10) + (now - parseInt(el.dataset.agoBase, 10)) / 1000));
      if (isNaN(s)) return;
      var text = s < 60 ? portalText("ago_seconds", s) : s < 3600 ? portalText("ago_minutes", Math.floor(s / 60)) : portalText("ago_hours", Math.floor(s / 3600));
      if (el.textContent !== text) el.textContent = text;
    });
  }
  window.setInterval(tickAgo, 5000);
  document.addEventListener("htmx:load", tickAgo);

  // An action's answer may carry X-Live-Tag: the state the page now shows (the user's own change),
  // for regions whose tag is their own data-tag (the contract page); and X-Live-Since, the server's
  // time after the action, from which the next notice counts the changes (not the user's own).
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail && event.detail.xhr;
    var tag = xhr && xhr.getResponseHeader("X-Live-Tag");
    if (!tag) return;
    var since = xhr.getResponseHeader("X-Live-Since");
    document.querySelectorAll("[data-live-poll]:not([data-live-tag])").forEach(function (region) {
      region.setAttribute("data-tag", tag);
      if (since && /^\d+$/.test(since) && region.hasAttribute("data-since")) region.setAttribute("data-since", since);
    });
  });

  document.addEventListener("click", function (event) {
    var dismiss = event.target.closest && event.target.closest("[data-dismiss-conflict]");
    if (!dismiss) return;
    var notice = dismiss.closest(".conflict-notice");
    if (notice) notice.remove();
    var carts = document.getElementById("quote-carts-title");
    if (carts) carts.focus();
  });
})();

// ---- Time zone (issue 26, docs/i18n.md) ----
// The server shows times in the person's time zone: the browser's own, kept in the portal_tz
// cookie (a preference like the language; the server checks it against the time zone database
// and falls back to UTC), and names the zone it used on <html data-tz>. A page rendered in another
// zone (the first one, before the cookie existed; or after a journey) gets its times, each a
// <time datetime="UTC" data-t="m|s">, written here in the browser's zone, as will the regions
// htmx swaps into it. English as the server writes it: day, month, year (en-GB).
(function () {
  "use strict";
  var zone, root = document.documentElement, formats = {};
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone || !/^[A-Za-z0-9_+\/-]{1,64}$/.test(zone)) return;
  var kept = document.cookie.match(/(?:^|;\s*)portal_tz=([^;]*)/);
  if (!kept || kept[1] !== zone) {
    document.cookie = "portal_tz=" + zone + "; path=/; max-age=31536000; samesite=lax" +
      (window.location.protocol === "https:" ? "; secure" : "");
  }
  if (!root.hasAttribute("data-tz") || root.getAttribute("data-tz") === zone) return;
  function show(scope) {
    scope.querySelectorAll("time[data-t]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime")), detail = el.getAttribute("data-t");
      if (isNaN(at)) return;
      try {
        formats[detail] = formats[detail] || new Intl.DateTimeFormat(root.lang === "en" ? "en-GB" : root.lang || undefined, {
          timeZone: zone, timeZoneName: "short", day: "numeric", month: "short", year: "numeric",
          hour: "2-digit", minute: "2-digit", second: detail === "s" ? "2-digit" : undefined, hourCycle: "h23"
        });
      } catch (e) { return; }
      el.textContent = formats[detail].format(at);
    });
    scope.querySelectorAll("[data-tz-name]").forEach(function (el) { el.textContent = zone; });
  }
  root.setAttribute("data-tz", zone);
  show(document);
  document.addEventListener("htmx:load", function (event) { show(event.target); });
})();
// ---- end time zone ----
