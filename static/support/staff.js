/*
 * The conversation page in admin: new messages appear without a reload.
 *
 * While the page is visible it fetches itself again (every 5 s, up to every 30 s
 * while nothing changes) and, when the transcript grew, swaps in the new
 * transcript and status. The reply box is left alone, so a draft is never lost.
 */
(function () {
  "use strict";

  var FIRST_MS = 5000;
  var MAX_MS = 30000;
  var delay = FIRST_MS;
  var timer = null;

  if (!document.getElementById("transcript") || !window.fetch || !window.DOMParser) {
    return;
  }

  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, delay);
  }

  function swap(fresh, id) {
    var now = document.getElementById(id);
    var next = fresh.getElementById(id);
    if (now && next) {
      now.replaceWith(document.importNode(next, true));
    }
  }

  function check() {
    if (document.hidden) {
      return; // Checked again when the page is shown.
    }
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html === null) {
          delay = Math.min(delay * 2, MAX_MS);
          return;
        }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var next = fresh.getElementById("transcript");
        var now = document.getElementById("transcript");
        if (next && now && next.dataset.count !== now.dataset.count) {
          swap(fresh, "transcript");
          swap(fresh, "conversation-status");
          delay = FIRST_MS;
        } else {
          delay = Math.min(Math.round(delay * 1.5), MAX_MS);
        }
      })
      .catch(function () {
        delay = Math.min(delay * 2, MAX_MS);
      })
      .finally(schedule);
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      delay = FIRST_MS;
      check();
    }
  });
  schedule();
})();
