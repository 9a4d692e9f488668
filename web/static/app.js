// CPQ Portal behaviour. Our own small script, loaded with `defer` after htmx.
// The CSP forbids inline script and eval, so every behaviour is wired here from data attributes
// and htmx events; never use hx-on (it needs eval) or inline handlers.
//
// Conventions (see web/templates/components and internal/handlers):
//   - toasts: the server appends components.Toast fragments to #toasts (out-of-band swap), or sends
//     `HX-Trigger: {"showToast": {"level": "success", "message": "...", "requestId": "..."}}`.
//   - announcements for screen readers: `HX-Trigger: {"announce": "Customer list updated"}`.
//   - `data-confirm="Delete?"` on a plain (non-htmx) form asks before submitting; htmx elements use hx-confirm.
//   - plain forms disable their submit buttons while submitting; htmx forms use hx-disabled-elt.
//   - `[data-autofocus]` in swapped content gets focus; an error summary gets focus when it appears.
//   - `/` focuses the page's search input (`[data-search]` or input[type=search]).
//   - upload progress: `<progress data-upload-progress>` inside an htmx form follows htmx:xhr:progress.
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
      meta.textContent = "Request id: " + String(detail.requestId);
      body.appendChild(meta);
    }
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast__close";
    close.setAttribute("data-dismiss", "toast");
    close.setAttribute("aria-label", "Dismiss");
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
    showToast({ level: "error", message: "The portal could not be reached. Check your connection and try again." });
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

  document.addEventListener("DOMContentLoaded", function () {
    armToastsIn(toastRegion());
    focusIn(document.querySelector("main"));
  });
})();
