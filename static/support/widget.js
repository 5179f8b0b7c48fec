/*
 * Bookly's chat on a store's own pages: one script tag (README, "On your website").
 *
 *   <script src="https://support.example.com/widget.js" async></script>
 *
 * It adds a launcher button; the button opens Bookly's chat page (in its compact mode) in a frame.
 * Everything it draws lives in a shadow root, styled by a constructed style sheet: no CSS leaks
 * either way, and a host page's CSP that forbids inline styles does not stop it. Its one global is
 * window.BooklyWidget; loading the script twice adds nothing. A signed-in customer's signature, if
 * the store's page gives one (data-customer-email, data-customer-time, data-customer-signature), is
 * handed to the chat only, by postMessage to the chat's own origin. A signature is good for a few
 * minutes: one held longer than a minute is first renewed from data-customer-signature-url (the
 * store's own address, answering {"email", "time", "signature"}, or 401/204 when nobody is signed in)
 * when the page gives one. When the chat did not take the customer the page named (a signature too
 * old, or refused), the page hears it: a "bookly:sign-in-ended" event on window, with
 * detail.conversationEnded. The store's own words: data-label (the button), data-greeting (a note
 * beside it), data-color, data-position="left".
 */
(function () {
  "use strict";

  if (window.BooklyWidget) {
    return;
  }
  var script = document.currentScript;
  if (!script || !script.src) {
    return;
  }
  var chatOrigin = new URL(script.src).origin;
  var data = script.dataset;
  var READY_TIMEOUT_MS = 10000;

  var CSS = [
    ":host { all: initial; }",
    ".launcher { position: fixed; bottom: 20px; z-index: 2147483000; border: 0; border-radius: 999px;",
    "  padding: 12px 18px; background: #0b4f8a; color: #fff; font: 600 16px/1.2 system-ui, sans-serif;",
    "  box-shadow: 0 4px 14px rgba(0, 0, 0, 0.25); cursor: pointer; }",
    ".launcher:focus-visible { outline: 3px solid #f5b400; outline-offset: 2px; }",
    ".right { right: 20px; } .left { left: 20px; }",
    ".panel { position: fixed; bottom: 84px; z-index: 2147483000; width: 380px; height: min(640px, 80vh);",
    "  border-radius: 12px; overflow: hidden; background: #f5f3ee; box-shadow: 0 8px 30px rgba(0,0,0,.3); }",
    ".panel[hidden] { display: none; }",
    ".panel iframe { border: 0; width: 100%; height: 100%; display: block; }",
    ".down { font: 16px/1.4 system-ui, sans-serif; color: #222; padding: 24px; }",
    ".greeting { position: fixed; bottom: 76px; z-index: 2147483000; max-width: 260px; display: flex;",
    "  align-items: flex-start; gap: 4px; padding: 10px 8px 10px 14px; border-radius: 12px; background: #fff;",
    "  color: #222; font: 15px/1.4 system-ui, sans-serif; box-shadow: 0 4px 14px rgba(0, 0, 0, 0.2); }",
    ".greeting[hidden] { display: none; }",
    ".greeting button { all: unset; cursor: pointer; }",
    ".greeting button:focus-visible { outline: 3px solid #f5b400; outline-offset: 2px; }",
    ".greeting .dismiss { padding: 0 6px; font-size: 18px; line-height: 1; color: #555; }",
    ".badge { display: inline-block; min-width: 10px; height: 10px; margin-left: 8px; border-radius: 50%;",
    "  background: #f5b400; vertical-align: middle; }",
    "@media (max-width: 480px) {",
    "  .panel { inset: 0; width: auto; height: auto; border-radius: 0; box-sizing: border-box;",
    "    padding-top: 52px; background: #0b4f8a; }",
    "  .panel:not([hidden]) ~ .launcher { top: 8px; bottom: auto; right: 8px; left: auto; padding: 8px 14px;",
    "    box-shadow: none; border: 2px solid #fff; }",
    "}",
  ].join("\n");

  var host = document.createElement("div");
  host.setAttribute("data-bookly-widget", "");
  var root = host.attachShadow({ mode: "open" });
  var sheet = new CSSStyleSheet();
  sheet.replaceSync(CSS);
  // The store's colour for the button (data-color, a hex colour; anything else is ignored).
  if (/^#[0-9a-fA-F]{3,8}$/.test(data.color || "")) {
    sheet.insertRule(".launcher { background: " + data.color + "; }", sheet.cssRules.length);
  }
  root.adoptedStyleSheets = [sheet];

  var side = data.position === "left" ? "left" : "right";
  var panel = document.createElement("div");
  panel.className = "panel " + side;
  panel.id = "bookly-chat-panel";
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", "Bookly support chat");
  panel.hidden = true;

  var launcher = document.createElement("button");
  launcher.type = "button";
  launcher.className = "launcher " + side;
  launcher.textContent = data.label || "Chat with us";
  launcher.setAttribute("aria-expanded", "false");
  launcher.setAttribute("aria-controls", panel.id);
  root.append(panel, launcher);

  // The store's greeting (data-greeting), beside the button until the chat is opened or the greeting
  // dismissed; once a visit (of this tab), not on every page of the store.
  var GREETING_SEEN = "bookly-widget-greeting-seen";
  var greeting = null;
  if (data.greeting && !remembered(GREETING_SEEN)) {
    greeting = document.createElement("div");
    greeting.className = "greeting " + side;
    var words = document.createElement("button");
    words.type = "button";
    words.textContent = data.greeting;
    words.addEventListener("click", function () {
      open();
    });
    var dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "dismiss";
    dismiss.textContent = "\u00d7";
    dismiss.setAttribute("aria-label", "Dismiss");
    dismiss.addEventListener("click", function () {
      hideGreeting();
      launcher.focus();
    });
    greeting.append(words, dismiss);
    root.append(greeting);
  }

  function remembered(key) {
    try {
      return window.sessionStorage.getItem(key) === "1";
    } catch (error) {
      return false; // storage refused (a privacy setting): the greeting shows again, nothing worse
    }
  }

  function hideGreeting() {
    if (greeting) {
      greeting.remove();
      greeting = null;
      try {
        window.sessionStorage.setItem(GREETING_SEEN, "1");
      } catch (error) {
        // as above
      }
    }
  }

  var frame = null;
  var readyTimer = null;

  // Who the store says its customer is: the script tag's data-customer-* attributes, or what a
  // single-page shop passes to BooklyWidget.signIn() later.
  var signedIn = null;
  // When the widget got the signature held (by this browser's clock: the store's may differ).
  var signedInAt = 0;
  // Moved on by each BooklyWidget.signIn(): a renewal or a hello begun before it gives way to it.
  var generation = 0;
  // Whether the last hello named a customer (the chat's answer says whether it took them), and the
  // signature the store's page was last told about (once a signature).
  var named = false;
  var endedFor = null;
  var RENEW_AFTER_MS = 60000;
  var RENEW_TIMEOUT_MS = 2000; // the chat waits three seconds for the store's word on its customer

  function holdCustomer(customer) {
    signedIn = customer && customer.email && customer.signature
      ? { email: customer.email, time: customer.time, signature: customer.signature }
      : null;
    signedInAt = Date.now();
  }
  holdCustomer({ email: data.customerEmail, time: data.customerTime, signature: data.customerSignature });

  function renewalUrl() {
    try {
      var url = new URL(data.customerSignatureUrl, window.location.href);
      return url.origin === window.location.origin ? url.href : null; // the store's own address only
    } catch (error) {
      return null;
    }
  }

  // A signature held for more than a minute, renewed from the store's own address first when the page
  // gives one: a tab left open longer than a signature lasts still has its customer signed in when the
  // chat is first opened, or its frame loaded again. No answer within two seconds, or one that is not a
  // signature, leaves the one held; 401, 403, 204 or a redirect (to a login page) means nobody.
  function renewed() {
    var asked = generation;
    var url = signedIn && data.customerSignatureUrl && Date.now() - signedInAt >= RENEW_AFTER_MS && renewalUrl();
    if (!url || typeof window.fetch !== "function") {
      return Promise.resolve();
    }
    var controller = typeof AbortController === "function" ? new AbortController() : null;
    var timer = controller && window.setTimeout(function () { controller.abort(); }, RENEW_TIMEOUT_MS);
    var done = function () { window.clearTimeout(timer); };
    return window
      .fetch(url, {
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json" },
        signal: controller ? controller.signal : undefined,
      })
      .then(function (response) {
        if (asked !== generation) {
          return; // the page signed someone in or out meanwhile: its word stands
        }
        if (response.redirected || [401, 403, 204].indexOf(response.status) !== -1) {
          holdCustomer(null); // signed out of the store meanwhile
          return;
        }
        return response.ok
          ? response.json().then(function (customer) {
              if (asked === generation && customer && customer.email && customer.signature) {
                holdCustomer(customer);
              }
            })
          : undefined;
      })
      .catch(function () {
        // No answer in time, or not JSON: the chat judges the signature held.
      })
      .then(done, done);
  }

  function hello() {
    var asked = generation;
    renewed().then(function () {
      if (asked !== generation || !frame || !frame.contentWindow) {
        return; // a newer hello (BooklyWidget.signIn) is on its way
      }
      named = Boolean(signedIn);
      frame.contentWindow.postMessage({ type: "bookly:hello", customer: signedIn }, chatOrigin);
    });
  }

  function signIn(customer) {
    generation += 1;
    holdCustomer(customer);
    if (frame && frame.contentWindow) {
      hello(); // the chat signs the customer in (or out) at once
    }
  }

  function unreachable() {
    // No answer from the chat: say so, instead of an empty panel.
    var note = document.createElement("p");
    note.className = "down";
    note.setAttribute("role", "status");
    note.textContent = "Our chat can't be reached right now. Please try again in a little while.";
    panel.replaceChildren(note);
    frame = null;
  }

  function load() {
    frame = document.createElement("iframe");
    frame.title = "Bookly support chat";
    frame.src = chatOrigin + "/?embed=1";
    frame.addEventListener("load", hello);
    readyTimer = window.setTimeout(unreachable, READY_TIMEOUT_MS);
    panel.replaceChildren(frame);
  }

  function showUnread(unread) {
    launcher.textContent = panel.hidden ? data.label || "Chat with us" : "Close chat";
    launcher.removeAttribute("aria-label");
    if (unread) {
      var badge = document.createElement("span");
      badge.className = "badge";
      launcher.append(badge);
      launcher.setAttribute("aria-label", launcher.textContent + ", new message");
    }
  }

  function open() {
    if (!frame) {
      load();
    }
    hideGreeting();
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    showUnread(false);
    frame && frame.focus();
  }

  function close() {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    showUnread(false);
    launcher.focus();
  }

  launcher.addEventListener("click", function () {
    if (panel.hidden) {
      open();
    } else {
      close();
    }
  });
  root.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) {
      close();
    }
  });
  window.addEventListener("message", function (event) {
    if (event.origin !== chatOrigin || !frame || event.source !== frame.contentWindow) {
      return;
    }
    var type = event.data && event.data.type;
    if (type === "bookly:ready") {
      window.clearTimeout(readyTimer);
      if (named && event.data.signedIn === false && endedFor !== signedIn) {
        // The customer the page named is not signed in to the chat: the page may hand a fresh
        // signature (BooklyWidget.signIn). Once a signature: a page that answers with one that is
        // refused too is not asked again and again.
        endedFor = signedIn;
        window.dispatchEvent(
          new CustomEvent("bookly:sign-in-ended", { detail: { conversationEnded: Boolean(event.data.conversationEnded) } })
        );
      }
    } else if (type === "bookly:close" && !panel.hidden) {
      close(); // Escape pressed inside the chat
    } else if (type === "bookly:new-message" && panel.hidden) {
      showUnread(true); // an answer, or our team's reply, while the chat is closed
    }
  });

  function attach() {
    document.body.append(host);
  }
  if (document.body) {
    attach();
  } else {
    document.addEventListener("DOMContentLoaded", attach);
  }
  window.BooklyWidget = { open: open, close: close, signIn: signIn };
})();
