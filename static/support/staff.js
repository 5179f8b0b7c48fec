/*
 * The conversation page in admin.
 *
 * - New messages appear without a reload: while the page is visible it fetches itself again (every
 *   5 s, up to every 30 s while nothing changes) and, when the transcript grew, swaps in the new
 *   transcript and the facts beside it. Like the inbox, it keeps its member of staff available only
 *   while they use the page. The reply box is left alone, so a draft is never lost.
 * - The reply box sends without leaving the page (its place and focus stay); a refusal is said
 *   beside it and the text stays. Its draft is kept in the tab's storage until sent.
 * - Typing / in the reply box lists the saved replies, filled for this conversation: arrows choose,
 *   Enter inserts, Escape closes.
 * - A link to a turn's trace (#trace-N) opens it.
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

  // --- a trace link opens its trace -----------------------------------------------------------
  function openTarget() {
    var target = window.location.hash && document.getElementById(window.location.hash.slice(1));
    var details = target && target.querySelector("details");
    if (details) {
      details.open = true;
      target.scrollIntoView({ block: "center" });
    }
  }
  window.addEventListener("hashchange", openTarget);
  if (window.location.hash) {
    openTarget();
  } else {
    window.scrollTo(0, document.body.scrollHeight); // as a chat opens: on its latest messages, by the box
  }

  // --- the transcript, refreshed ---------------------------------------------------------------
  var used = false; // the member of staff clicked, typed or scrolled since the last refresh
  ["keydown", "pointerdown", "wheel", "scroll"].forEach(function (type) {
    document.addEventListener(type, function () { used = true; }, { passive: true, capture: true });
  });

  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, delay);
  }

  function swap(fresh, id) {
    var now = document.getElementById(id);
    var next = fresh.getElementById(id);
    if (now && next) {
      // Turns a member of staff opened stay open (the turn itself, not the raw calls inside it).
      var open = {};
      now.querySelectorAll("li[id] > details[open]").forEach(function (details) {
        open[details.parentNode.id] = true;
      });
      var copy = document.importNode(next, true);
      copy.querySelectorAll("li[id] > details").forEach(function (details) {
        details.open = Boolean(open[details.parentNode.id]);
      });
      now.replaceWith(copy);
    }
  }

  function refresh(force) {
    var poll = used ? "active" : "idle"; // only a member of staff at work stays available
    used = false;
    return fetch(window.location.pathname, {
      credentials: "same-origin",
      headers: { Accept: "text/html", "X-Bookly-Poll": force ? "active" : poll },
    })
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
        if (force || (next && now && next.dataset.count !== now.dataset.count)) {
          var atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
          swap(fresh, "transcript");
          // The facts and actions beside it (who has it, the assign form's "as seen" value), unless the
          // member of staff is using them.
          var side = document.getElementById("conversation-side");
          if (!side || !side.contains(document.activeElement)) {
            swap(fresh, "conversation-side");
          }
          if (atBottom) {
            window.scrollTo(0, document.body.scrollHeight); // following the conversation: stay at its end
          }
          delay = FIRST_MS;
        } else {
          delay = Math.min(Math.round(delay * 1.5), MAX_MS);
        }
      })
      .catch(function () {
        delay = Math.min(delay * 2, MAX_MS);
      });
  }

  function check() {
    if (document.hidden) {
      return; // Checked again when the page is shown.
    }
    refresh(false).finally(schedule);
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      delay = FIRST_MS;
      check();
    }
  });
  schedule();

  // --- the reply box ------------------------------------------------------------------------------
  var composer = document.getElementById("composer");
  if (!composer) {
    return;
  }
  var box = document.getElementById("composer-text");
  var status = document.getElementById("composer-status");
  var picker = document.getElementById("saved-replies");
  var draftKey = "bookly-draft:" + window.location.pathname;
  var sending = false;

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("support-composer__status--error", Boolean(isError));
  }

  try {
    if (!box.value && window.sessionStorage.getItem(draftKey)) {
      box.value = window.sessionStorage.getItem(draftKey);
    }
  } catch (error) {
    // No storage: the draft lives in the box only.
  }
  box.addEventListener("input", function () {
    try {
      window.sessionStorage.setItem(draftKey, box.value);
    } catch (error) {
      // As above.
    }
  });

  var pressed = null; // the button, for browsers without event.submitter
  composer.querySelectorAll("button[name=action]").forEach(function (button) {
    button.addEventListener("click", function () { pressed = button; });
  });

  composer.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = event.submitter || pressed;
    if (sending || !button) {
      return; // a double press sends once
    }
    var data = new FormData(composer);
    data.set("action", button.value);
    var sent = box.value;
    sending = true;
    composer.setAttribute("aria-busy", "true");
    fetch(window.location.pathname, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) {
        return response.json().catch(function () {
          return { error: "The server did not answer as expected (" + response.status + "). Your text is still here." };
        });
      })
      .then(function (answer) {
        if (answer.error) {
          say(answer.error, true);
          return;
        }
        say(answer.message, false);
        if (box.value === sent) {
          // Only what was sent: anything typed meanwhile stays, and stays the draft.
          box.value = "";
          try {
            window.sessionStorage.removeItem(draftKey);
          } catch (error) {
            // As above.
          }
        }
        return refresh(true);
      })
      .catch(function () {
        say("The server could not be reached. Your text is still here; send it again.", true);
      })
      .finally(function () {
        sending = false;
        composer.removeAttribute("aria-busy");
        box.focus();
      });
  });

  // --- saved replies, on / ------------------------------------------------------------------------
  var replies = null; // fetched the first time they are asked for
  var shown = [];
  var chosen = 0;
  var slashAt = -1; // where the / that opened the list is in the box

  function load() {
    // Asked again each time the list opens: an order looked up since fills {{order_number}}.
    return fetch(composer.dataset.savedRepliesUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (answer) {
        replies = answer.replies || [];
        return replies;
      });
  }

  function close() {
    picker.hidden = true;
    picker.replaceChildren();
    slashAt = -1;
    box.removeAttribute("aria-activedescendant");
  }

  function render(query) {
    var words = query.toLowerCase();
    shown = replies.filter(function (reply) { return reply.title.toLowerCase().indexOf(words) !== -1; });
    chosen = Math.min(chosen, Math.max(shown.length - 1, 0));
    picker.replaceChildren();
    if (!shown.length) {
      var none = document.createElement("div");
      none.className = "support-composer__option";
      none.textContent = replies.length ? "No saved reply matches \u201c" + query + "\u201d." : "No saved replies yet.";
      picker.append(none);
    }
    shown.forEach(function (reply, index) {
      var option = document.createElement("div");
      option.className = "support-composer__option";
      option.id = "saved-reply-" + reply.id;
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", index === chosen ? "true" : "false");
      option.textContent = reply.title + (reply.shared ? "" : " (yours)");
      var preview = document.createElement("small");
      preview.textContent = reply.text;
      option.append(preview);
      option.addEventListener("mousedown", function (event) {
        event.preventDefault(); // keep the focus in the box
        insert(reply);
      });
      picker.append(option);
    });
    if (shown[chosen]) {
      box.setAttribute("aria-activedescendant", "saved-reply-" + shown[chosen].id);
    }
    picker.hidden = false;
  }

  function insert(reply) {
    if (box.selectionStart <= slashAt) {
      close();
      return;
    }
    var before = box.value.slice(0, slashAt);
    var after = box.value.slice(box.selectionStart);
    box.value = before + reply.text + after;
    var caret = before.length + reply.text.length;
    box.setSelectionRange(caret, caret);
    close();
    box.dispatchEvent(new Event("input"));
    if (reply.missing.length) {
      say(
        "Nothing in this conversation for " +
          reply.missing.map(function (name) { return "{{" + name + "}}"; }).join(", ") +
          ": write it in before sending (a reply with a placeholder left is not sent).",
        true
      );
    } else {
      say("", false);
    }
  }

  function query() {
    return box.value.slice(slashAt + 1, box.selectionStart);
  }

  box.addEventListener("input", function () {
    var caret = box.selectionStart;
    if (slashAt === -1) {
      var typed = box.value.charAt(caret - 1);
      var before = caret < 2 ? "" : box.value.charAt(caret - 2);
      if (typed === "/" && (before === "" || /\s/.test(before))) {
        slashAt = caret - 1;
        chosen = 0;
        load().then(function () { slashAt !== -1 && render(query()); }, function () {
          say("The saved replies could not be loaded.", true);
          close();
        });
      }
      return;
    }
    if (caret <= slashAt || box.value.charAt(slashAt) !== "/" || /\n/.test(query())) {
      close();
    } else if (replies) {
      render(query());
    }
  });

  box.addEventListener("keydown", function (event) {
    if (picker.hidden) {
      return;
    }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % Math.max(shown.length, 1);
      render(query());
    } else if (event.key === "Enter" && shown[chosen]) {
      event.preventDefault();
      insert(shown[chosen]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (["ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"].indexOf(event.key) !== -1) {
      close(); // the caret leaves the words after the /
    }
  });
  box.addEventListener("pointerdown", close);
  box.addEventListener("blur", close);
})();
