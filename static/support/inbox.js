/*
 * The inbox in admin, live: it asks the server what changed (every 3 s while the tab is shown, every
 * 15 s while it is hidden, slower while the server fails; saying whether the member of staff used the
 * page since, which alone keeps them available) and, when the inbox's version changed,
 * fetches the page again with the same filters and swaps in its rows. Scroll, filters and a
 * selection are kept: rows are not swapped while a row is selected. The tab's title counts the
 * customers waiting. A member of staff may ask for a notification and a sound when a customer starts
 * waiting while they are available.
 */
(function () {
  "use strict";

  var live = document.getElementById("inbox-live");
  if (!live || !window.fetch || !window.DOMParser) {
    return;
  }
  var SHOWN_MS = 3000;
  var HIDDEN_MS = 15000;
  var MAX_MS = 60000;
  var NOTIFY_KEY = "bookly-inbox-notify";

  var stateUrl = live.dataset.stateUrl;
  var version = live.dataset.version;
  var available = live.dataset.available === "true";
  var known = idsOf(live.dataset.waiting ? live.dataset.waiting.split(",") : []);
  var mineList = document.getElementById("inbox-mine");
  var mine = idsOf(mineList && mineList.dataset.mine ? mineList.dataset.mine.split(",") : []);
  var baseTitle = document.title;
  var failures = 0;
  var timer = null;
  var used = false; // the member of staff did something on the page since the last poll
  var audio = null;

  ["keydown", "pointerdown", "wheel", "scroll"].forEach(function (type) {
    document.addEventListener(type, function () { used = true; }, { passive: true, capture: true });
  });

  function idsOf(list) {
    var ids = {};
    list.forEach(function (id) { ids[String(id)] = true; });
    return ids;
  }

  function countTitle(count) {
    document.title = count ? "(" + count + ") " + baseTitle : baseTitle;
  }

  // --- the waited times, counted on between refreshes -------------------------------------------
  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function since(iso) {
    var minutes = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 60000));
    if (minutes < 60) {
      return plural(minutes, "minute");
    }
    var hours = Math.floor(minutes / 60);
    if (hours < 24) {
      return plural(hours, "hour") + (minutes % 60 ? ", " + plural(minutes % 60, "minute") : "");
    }
    var days = Math.floor(hours / 24);
    return plural(days, "day") + (hours % 24 ? ", " + plural(hours % 24, "hour") : "");
  }

  function countWaits() {
    document.querySelectorAll("[data-since]").forEach(function (element) {
      element.textContent = since(element.dataset.since);
    });
  }

  // --- the rows --------------------------------------------------------------------------------
  function swap(fresh, selector, before) {
    var now = document.querySelector(selector);
    var next = fresh.querySelector(selector);
    if (now && next) {
      now.replaceWith(document.importNode(next, true));
    } else if (now) {
      now.remove();
    } else if (next && before) {
      var anchor = document.querySelector(before);
      anchor && anchor.before(document.importNode(next, true));
    }
  }

  function refresh() {
    if (document.querySelector("#result_list .action-select:checked")) {
      return Promise.resolve(false); // a row is selected for an action: not under the member's hand
    }
    // "idle": fetching the rows again says nothing of whether the member of staff is at work.
    return fetch(window.location.href, {
      credentials: "same-origin",
      headers: { Accept: "text/html", "X-Bookly-Poll": "idle" },
    })
      .then(function (response) {
        return response.ok ? response.text() : Promise.reject(new Error(String(response.status)));
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        swap(fresh, "#changelist-form .results", "#changelist-form .paginator");
        swap(fresh, "#changelist-form .paginator");
        swap(fresh, "#availability");
        countWaits();
        return true;
      });
  }

  // --- notifications ----------------------------------------------------------------------------
  var alerts = document.getElementById("inbox-alerts");
  var toggle = document.getElementById("notify-toggle");
  var status = document.getElementById("notify-status");

  function notifying() {
    try {
      return window.localStorage.getItem(NOTIFY_KEY) === "on";
    } catch (error) {
      return false;
    }
  }

  function remember(on) {
    try {
      window.localStorage.setItem(NOTIFY_KEY, on ? "on" : "off");
    } catch (error) {
      // Kept for this page only.
    }
  }

  function showAlerts() {
    if (!("Notification" in window)) {
      toggle.hidden = true;
      status.textContent = "This browser cannot show notifications; the tab's title counts the customers waiting.";
    } else if (Notification.permission === "denied") {
      toggle.textContent = "Notify me when a customer starts waiting";
      status.textContent =
        "Your browser blocks notifications from this site. Allow them in the site's settings (the icon " +
        "beside the address), then press the button again. The tab's title counts the customers waiting.";
    } else if (notifying() && Notification.permission === "granted") {
      toggle.textContent = "Stop notifying me";
      status.textContent = "On: a notification and a sound when a customer starts waiting while you are available.";
    } else {
      toggle.textContent = "Notify me when a customer starts waiting";
      status.textContent = "";
    }
    alerts.hidden = false;
  }

  function chime() {
    // A short tone, made here: no sound file to load. Browsers play it only after the member of
    // staff has clicked on the page (the button that turned this on counts).
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) {
      return;
    }
    audio = audio || new Context();
    var tone = audio.createOscillator();
    var volume = audio.createGain();
    tone.frequency.value = 880;
    volume.gain.setValueAtTime(0.15, audio.currentTime);
    volume.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
    tone.connect(volume).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.4);
  }

  function announce(newcomers, given) {
    if (!notifying() || !("Notification" in window) || Notification.permission !== "granted") {
      return;
    }
    given.forEach(function (id) {
      var note = new Notification("Conversation " + id + " is yours now", { tag: "bookly-mine-" + id });
      note.onclick = function () {
        window.focus();
        window.location.href = id + "/change/";
      };
    });
    if (!available) {
      return;
    }
    newcomers.forEach(function (waiting) {
      var note = new Notification("A customer is waiting for a person", {
        body: waiting.customer,
        tag: "bookly-waiting-" + waiting.id,
      });
      note.onclick = function () {
        window.focus();
        window.location.href = waiting.id + "/change/";
      };
    });
    if (newcomers.length) {
      chime();
    }
  }

  if (alerts && toggle && status) {
    toggle.addEventListener("click", function () {
      if (notifying() && Notification.permission === "granted") {
        remember(false);
        showAlerts();
        return;
      }
      Notification.requestPermission().then(function (permission) {
        remember(permission === "granted");
        showAlerts();
        if (permission === "granted") {
          chime(); // so that the browser lets the page play it later
        } else if (permission === "default") {
          status.textContent =
            "Notifications were not allowed. Press the button again to be asked again; the tab's title " +
            "counts the customers waiting.";
        }
      });
    });
    showAlerts();
  }

  // --- the poll ---------------------------------------------------------------------------------
  function schedule() {
    window.clearTimeout(timer);
    var delay = document.hidden ? HIDDEN_MS : SHOWN_MS;
    timer = window.setTimeout(poll, Math.min(delay * Math.pow(2, failures), MAX_MS));
  }

  var polling = false;

  function poll() {
    if (polling) {
      return; // one at a time (a tab shown again while a poll is out)
    }
    polling = true;
    // Keeps them available only if they used the page since the last poll (a tab left open does not).
    var poll = used ? "active" : "idle";
    used = false;
    fetch(stateUrl, { credentials: "same-origin", headers: { Accept: "application/json", "X-Bookly-Poll": poll } })
      .then(function (response) {
        return response.ok ? response.json() : Promise.reject(new Error(String(response.status)));
      })
      .then(function (state) {
        failures = 0;
        countTitle(state.waiting.length);
        var newcomers = state.waiting.filter(function (waiting) { return !known[String(waiting.id)]; });
        known = idsOf(state.waiting.map(function (waiting) { return waiting.id; }));
        // Newly theirs, and by a colleague's hand (not one they took themselves in another tab).
        var given = state.given.filter(function (id) { return !mine[String(id)]; });
        mine = idsOf(state.mine);
        var count = document.getElementById("inbox-mine-count");
        if (count) {
          count.textContent = String(state.mine.length);
        }
        var changed = state.version !== version || state.available !== available;
        available = state.available;
        announce(newcomers, given);
        if (!changed) {
          countWaits();
          return null;
        }
        return refresh().then(function (swapped) {
          if (swapped) {
            version = state.version;
          }
        });
      })
      .catch(function () {
        failures = Math.min(failures + 1, 5);
      })
      .finally(function () {
        polling = false;
        schedule();
      });
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      poll();
    }
  });
  countTitle(Object.keys(known).length);
  schedule();
})();
