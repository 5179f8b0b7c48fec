/*
 * Bookly chat: progressive enhancement of the chat page's form.
 *
 * Without this script the form posts to the server and the page reloads. With
 * it, messages go through the JSON API (/api/chat): the customer's message
 * shows at once, a status line says what the assistant is doing (streamed as
 * server-sent events while the turn runs), and errors appear
 * inline with a Retry button. Replies are always inserted as text, never HTML.
 *
 * Each reply of the assistant takes a vote (helpful or not) and the conversation a
 * rating, through /api/chat/feedback; without this script the same forms post.
 *
 * "Talk to a person" goes through /api/chat/handoff. While a person answers (or
 * is on the way), and while the store has yet to make a change asked here
 * (`awaiting_store`: a change it does not make is told as a message of its own),
 * the page asks /api/chat for new messages every few seconds, less often while
 * nothing changes or the tab is hidden.
 */
(function () {
  "use strict";

  var form = document.getElementById("composer");
  if (!form || !window.fetch || !window.AbortController) {
    return; // The plain form keeps working.
  }

  var box = form.querySelector("textarea[name=message]");
  var sendButton = document.getElementById("send");
  var transcript = document.getElementById("transcript");
  var scroller = document.getElementById("chat-scroller");
  var welcome = document.getElementById("welcome");
  var jumpLatest = document.getElementById("jump-latest");
  var nobreak = new RegExp(transcript.dataset.nobreak, "g");
  var clock = timeFormat(transcript.dataset.timeZone);
  var typing = document.getElementById("typing");
  var errorArea = document.getElementById("chat-error");
  var notices = document.getElementById("notices");
  var offlineNotice = document.getElementById("offline-notice");
  var hint = document.getElementById("message-hint");
  var resetForm = document.getElementById("reset-form");
  var suggestionButtons = document.querySelectorAll("button[name=suggestion]");
  var handoff = document.getElementById("handoff");
  var handoffNotice = document.getElementById("handoff-notice");
  var handoffReload = document.getElementById("handoff-reload");
  var handoffForm = document.getElementById("handoff-form");
  var handoffEmail = document.getElementById("handoff-email");
  var handoffEmailInput = document.getElementById("handoff-email-input");
  var handoffButton = document.getElementById("handoff-button");
  var voteTemplate = document.getElementById("vote-template");
  var rating = document.getElementById("rating");
  var ratingForm = document.getElementById("rating-form");
  var ratingThanks = document.getElementById("rating-thanks");
  var ratingDetails = document.getElementById("rating-details");
  var ratingButton = ratingForm.querySelector("button[type=submit]");
  // Feedback names the conversation the page shows, so that it never lands in a later one.
  var conversationRef = transcript.dataset.conversation || "";
  var apiUrl = form.dataset.apiUrl;
  var timeoutMs = parseInt(form.dataset.timeoutMs, 10) || 60000;
  var busy = false;
  // Which conversation the page shows: bumped when the store says it ended (a sign-out, another
  // customer signed in). An answer asked for under an older one is dropped, never drawn.
  var conversationEpoch = 0;
  // Aborts the turn in flight (its request and its stream), if any.
  var turnAbort = null;

  var TYPING_TEXT = "Bookly assistant is typing\u2026";
  var NETWORK_ERROR = "We couldn't reach Bookly. Check your internet connection, then try again.";
  var TIMEOUT_ERROR =
    "The assistant is taking too long to answer. Your message may still be answered: try again in a moment.";
  var GENERIC_ERROR = "Something went wrong on our side. Please try again.";
  var POLL_FIRST_MS = 3000;
  var POLL_MAX_MS = 15000;
  var status = handoff.dataset.status;
  // The store has yet to make (or to be told not to have made) a change asked in this conversation.
  var awaitingStore = handoff.dataset.awaitingStore === "true";
  var shownCount = transcript.children.length;
  var pollDelay = POLL_FIRST_MS;
  var pollTimer = null;

  hint.hidden = false;
  box.setAttribute("aria-describedby", hint.id);

  // Hours and minutes in the store's time zone; a zone this browser does not know (Django accepts any
  // name the server's zoneinfo has) falls back to the browser's own rather than stopping the script.
  function timeFormat(zone) {
    var options = { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
    try {
      return new Intl.DateTimeFormat("en-GB", Object.assign({ timeZone: zone || undefined }, options));
    } catch (error) {
      return new Intl.DateTimeFormat("en-GB", options);
    }
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) {
      return decodeURIComponent(match[1]);
    }
    // The form's own token, if the cookie cannot be read.
    var field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function authorOf(role, name) {
    if (role === "customer") {
      return "You";
    }
    if (role === "staff") {
      return (name ? name + " \u00b7 " : "") + "Bookly support";
    }
    return "Bookly assistant";
  }

  // The reply's vote buttons, as the server renders them; helpful is true, false or null (no vote).
  function voteForm(turn, helpful) {
    var vote = voteTemplate.content.firstElementChild.cloneNode(true);
    vote.querySelector("input[name=turn]").value = String(turn);
    vote.querySelector("input[name=conversation]").value = conversationRef;
    showVote(vote, helpful);
    if (helpful !== null && helpful !== undefined) {
      vote.querySelector(".vote__thanks").textContent = "Thanks for your feedback.";
    }
    return vote;
  }

  function showVote(vote, helpful) {
    vote.querySelectorAll("button[name=helpful]").forEach(function (button) {
      var pressed = helpful !== null && helpful !== undefined && (button.value === "yes") === helpful;
      button.setAttribute("aria-pressed", pressed ? "true" : "false");
    });
  }

  // Whether the customer is reading the newest messages (not scrolled up to read older ones).
  function atLatest() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
  }

  function showLatest() {
    scroller.scrollTop = scroller.scrollHeight;
    jumpLatest.hidden = true;
  }

  // The message as text nodes (never markup), its dates and codes each kept on one line.
  function textWithCodes(text) {
    var nodes = [];
    var start = 0;
    text.replace(nobreak, function (code, offset) {
      nodes.push(document.createTextNode(text.slice(start, offset)));
      var span = document.createElement("span");
      span.className = "nobreak";
      span.textContent = code;
      nodes.push(span);
      start = offset + code.length;
      return code;
    });
    nodes.push(document.createTextNode(text.slice(start)));
    return nodes;
  }

  function timeOf(at) {
    var when = at ? new Date(at) : new Date();
    var time = document.createElement("time");
    time.className = "message__time";
    time.dateTime = when.toISOString();
    time.textContent = clock.format(when);
    return time;
  }

  // `follow` false: leave the scrolling to the caller (a transcript drawn again).
  // In the widget's frame: the store's page (its origin, once it said hello) shows a badge on its
  // launcher when an answer arrives while the chat is closed.
  var storeOrigin = null;
  // Settled once the store's page said who its customer is (in the widget's frame), so that a first
  // message is answered knowing it; at once anywhere else.
  var signInSettled = Promise.resolve();

  function announceNew() {
    if (storeOrigin) {
      window.parent.postMessage({ type: "bookly:new-message" }, storeOrigin);
    }
  }

  function addMessage(role, text, name, turn, helpful, at, follow) {
    var reading = atLatest();
    var item = document.createElement("div");
    item.className = "message message--" + role;
    var author = document.createElement("p");
    author.className = "message__author";
    author.append(authorOf(role, name), " ", timeOf(at));
    var body = document.createElement("p");
    body.className = "message__text";
    body.append.apply(body, textWithCodes(text));
    item.append(author, body);
    if (role === "assistant" && turn) {
      item.id = "reply-" + turn;
      item.append(voteForm(turn, helpful));
    }
    if (role !== "customer") {
      rating.hidden = false; // Someone has answered: the conversation can be rated.
    }
    transcript.append(item);
    if (follow === false) {
      return item;
    }
    if (role !== "customer") {
      announceNew();
    }
    if (reading || role === "customer") {
      showLatest();
    } else {
      jumpLatest.hidden = false; // They are reading older messages: say there is more, do not move.
    }
    return item;
  }

  function setBusy(isBusy) {
    busy = isBusy;
    sendButton.disabled = isBusy;
    suggestionButtons.forEach(function (button) {
      button.disabled = isBusy;
    });
    form.setAttribute("aria-busy", isBusy ? "true" : "false");
    typing.textContent = isBusy ? TYPING_TEXT : "";
  }

  function clearError() {
    errorArea.replaceChildren();
  }

  function showError(text, retryText) {
    var paragraph = document.createElement("p");
    paragraph.textContent = text;
    errorArea.replaceChildren(paragraph);
    if (retryText !== null) {
      var retry = document.createElement("button");
      retry.type = "button";
      retry.className = "button button--secondary";
      retry.textContent = "Retry";
      retry.addEventListener("click", function () {
        send(retryText);
      });
      errorArea.append(retry);
    }
  }

  function setOffline(offline) {
    if (offline !== undefined && offlineNotice) {
      offlineNotice.hidden = !offline;
    }
  }

  // A new visitor's first request brings back the session cookie every later one must carry: two sent
  // at once (a message, and "Talk to a person" pressed before its answer) would each start a session,
  // and a conversation, of their own. So the page's first request goes alone; once it is answered,
  // nothing waits.
  var firstAnswered = null;

  function post(url, body, accept, read, signal) {
    if (firstAnswered === null) {
      var first = postNow(url, body, accept, read, signal);
      firstAnswered = first.then(function () {}, function () {});
      return first;
    }
    return firstAnswered.then(function () {
      return postNow(url, body, accept, read, signal);
    });
  }

  // A POST with the CSRF token, given up after timeoutMs or when `signal` (optional) aborts;
  // `read(response)` makes it {status, payload}.
  function postNow(url, body, accept, read, signal) {
    var controller = new AbortController();
    var timer = window.setTimeout(function () {
      controller.abort();
    }, timeoutMs);
    if (signal) {
      if (signal.aborted) {
        controller.abort();
      }
      signal.addEventListener("abort", function () {
        controller.abort();
      });
    }
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: accept,
        "X-CSRFToken": csrfToken(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
    })
      .then(read)
      .finally(function () {
        window.clearTimeout(timer);
      });
  }

  function jsonOutcome(response) {
    return response
      .json()
      .catch(function () {
        return {};
      })
      .then(function (payload) {
        return { status: response.status, payload: payload || {} };
      });
  }

  function postJson(url, body) {
    return post(url, body, "application/json", jsonOutcome);
  }

  function setConversation(reference) {
    if (reference === undefined) {
      return;
    }
    conversationRef = reference || "";
    ratingForm.querySelector("input[name=conversation]").value = conversationRef;
  }

  // A new conversation: nothing rated yet, whatever the page was first rendered with.
  function clearRating() {
    rating.hidden = true;
    ratingDetails.open = false;
    ratingForm.querySelectorAll("input[name=rating]").forEach(function (radio) {
      radio.defaultChecked = false;
      radio.checked = false;
    });
    var comment = ratingForm.querySelector("textarea[name=comment]");
    comment.defaultValue = "";
    comment.value = "";
    ratingButton.textContent = "Send my rating";
    ratingThanks.textContent = "";
  }

  // A turn, as server-sent events on the POST itself: the status line follows each step as it starts
  // ("Looking up order BK-10042…"), then the reply (or the error) arrives in the JSON API's shape.
  function postTurn(text, signal) {
    return post(
      apiUrl,
      { message: text },
      "text/event-stream",
      function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("text/event-stream") !== 0 || !response.body) {
          return jsonOutcome(response); // refused before the turn began (a bad message, a rate limit)
        }
        return readEvents(response.body.getReader());
      },
      signal
    );
  }

  function readEvents(reader) {
    var decoder = new TextDecoder();
    var buffer = "";
    var outcome = null;
    function handle(block) {
      var name = "";
      var data = "";
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event: ") === 0) {
          name = line.slice(7);
        } else if (line.indexOf("data: ") === 0) {
          data += line.slice(6);
        }
      });
      if (!data) {
        return; // a keep-alive comment
      }
      var value = JSON.parse(data);
      if (name === "progress") {
        typing.textContent = value.status; // fixed words from the server, shown as text
      } else if (name === "reply") {
        outcome = { status: value.status, payload: value.body || {} };
      }
    }
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          if (outcome) {
            return outcome;
          }
          throw new Error("The answer was cut off.");
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        var blocks = buffer.split("\n\n");
        buffer = blocks.pop();
        blocks.forEach(handle);
        return outcome || pump();
      });
    }
    return pump();
  }

  function handleReply(outcome, text, bubble) {
    var payload = outcome.payload;
    setOffline(payload.offline);
    if (payload.conversation && payload.conversation !== conversationRef) {
      if (conversationRef) {
        clearRating(); // staff closed the old one: this message started another
      }
      setConversation(payload.conversation);
    }
    if (outcome.status === 200 && typeof payload.reply === "string") {
      addMessage("assistant", payload.reply, "", payload.votable ? payload.turn : null, null);
      shownCount = transcript.children.length;
      setAwaitingStore(payload.awaiting_store);
      if (payload.status !== status) {
        refresh(); // who answers changed (a handoff, a person took over, a new conversation)
      }
      return;
    }
    if (outcome.status === 200) {
      // A person answers this conversation: the message is kept for them.
      shownCount = transcript.children.length;
      refresh();
      return;
    }
    var detail = typeof payload.detail === "string" && payload.detail ? payload.detail : GENERIC_ERROR;
    if (payload.error === "conversation_ended") {
      // Signed out (or another customer signed in) while it was answered: the words and the
      // conversation were someone else's, perhaps, so neither is shown or offered to send again.
      conversationGone();
      showError(detail, null);
      return;
    }
    if (outcome.status === 400 || outcome.status === 403 || outcome.status === 413) {
      // Nothing was stored and resending the same text cannot help: give it back to edit.
      bubble.remove();
      if (!box.value) {
        box.value = text;
      }
      showError(detail, null);
    } else if (outcome.status === 422) {
      // Stored but set aside (the model could not take it): it stays in the conversation, and
      // sending it again would be set aside again. Give it back to put another way.
      if (!box.value) {
        box.value = text;
      }
      showError(detail, null);
    } else if (outcome.status === 409 || outcome.status === 429) {
      // Refused before it was stored.
      bubble.remove();
      showError(detail, text);
    } else {
      // 5xx: the server kept the message; the reply is what failed.
      showError(detail, text);
    }
  }

  // The conversation shown ended (the store signed its customer out or another one in): its
  // transcript goes, and so does the answer on its way, which was written for that customer.
  function conversationGone() {
    conversationEpoch += 1;
    if (turnAbort) {
      turnAbort.abort();
      turnAbort = null;
    }
    transcript.replaceChildren();
    shownCount = 0;
    clearRating();
    setConversation(null);
    clearError();
    notices.replaceChildren();
    typing.textContent = "";
    refresh();
  }

  function send(text) {
    if (busy) {
      return;
    }
    clearError();
    notices.replaceChildren();
    welcome.open = false; // The conversation has started: the introduction folds away (still there).
    var bubble = addMessage("customer", text);
    setBusy(true);
    var epoch = conversationEpoch;
    var aborter = new AbortController();
    turnAbort = aborter;
    signInSettled
      .then(function () {
        return postTurn(text, aborter.signal);
      })
      .then(function (outcome) {
        if (epoch === conversationEpoch) {
          handleReply(outcome, text, bubble);
        }
      })
      .catch(function (error) {
        if (epoch === conversationEpoch) {
          showError(error && error.name === "AbortError" ? TIMEOUT_ERROR : NETWORK_ERROR, text);
        }
      })
      .finally(function () {
        if (turnAbort === aborter) {
          turnAbort = null;
        }
        setBusy(false);
        box.focus();
      });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy) {
      return;
    }
    var submitter = event.submitter;
    if (submitter && submitter.name === "suggestion") {
      send(submitter.value); // What the customer typed stays in the box.
      return;
    }
    var text = box.value;
    if (!text.trim()) {
      showError("Please type a message first.", null);
      box.focus();
      return;
    }
    box.value = "";
    send(text);
  });

  box.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) {
      return; // Shift+Enter makes a new line; so does Enter while composing (IME).
    }
    event.preventDefault();
    if (!busy) {
      form.requestSubmit(sendButton);
    }
  });

  resetForm.addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy) {
      return;
    }
    postJson(resetForm.dataset.apiUrl)
      .then(function (outcome) {
        if (outcome.status !== 200) {
          throw new Error("reset refused");
        }
        setOffline(outcome.payload.offline);
        transcript.replaceChildren();
        shownCount = 0;
        clearRating();
        setConversation(null);
        awaitingStore = false; // a new conversation has asked the store for nothing
        applyWho(outcome.payload);
        clearError();
        notices.replaceChildren();
      })
      .catch(function () {
        showError("We couldn't start a new conversation. Please try again.", null);
      })
      .finally(function () {
        box.focus();
      });
  });

  // After asking for a person: the end of the conversation on screen (the email field, a new
  // conversation), but never past the start of the notice that says what happens next.
  function showWhatHappensNext() {
    showLatest();
    var above = handoffNotice.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
    if (!handoffNotice.hidden && above < 0) {
      scroller.scrollTop += above;
    }
  }

  function applyWho(payload) {
    handoffNotice.textContent = payload.notice || "";
    handoffNotice.hidden = !payload.notice;
    var withPerson = payload.status === "waiting" || payload.status === "person";
    handoffReload.textContent = "New replies from our team appear here as they arrive.";
    handoffReload.hidden = !withPerson;
    handoffEmail.hidden = !payload.email_needed;
    handoffButton.textContent = payload.email_needed ? "Save my email address" : "Talk to a person";
    handoffForm.hidden = withPerson && !payload.email_needed;
    setStatus(payload.status);
  }

  function setStatus(newStatus) {
    if (!newStatus) {
      return;
    }
    var withPerson = status === "waiting" || status === "person";
    var answered = transcript.querySelector(".message--assistant, .message--staff") !== null;
    if (withPerson && answered && (newStatus === "assistant" || newStatus === "closed")) {
      // Staff handed the conversation back or closed it: a good moment to ask how it went.
      rating.hidden = false;
      ratingDetails.open = true;
    }
    status = newStatus;
    handoff.dataset.status = status;
    if (asksForNews()) {
      schedulePoll();
    }
  }

  // Whether the page asks for new messages: while a person answers (or is on the way), and while the
  // store has yet to make a change asked here.
  function asksForNews() {
    return status === "waiting" || status === "person" || awaitingStore;
  }

  function setAwaitingStore(awaiting) {
    var before = awaitingStore;
    awaitingStore = awaiting === true;
    if (awaitingStore && !before) {
      pollDelay = POLL_FIRST_MS; // just asked: the store usually answers within seconds
    }
    if (awaitingStore) {
      schedulePoll();
    }
  }

  function schedulePoll() {
    if (pollTimer === null) {
      pollTimer = window.setTimeout(poll, pollDelay);
    }
  }

  function poll() {
    pollTimer = null;
    if (!asksForNews()) {
      return;
    }
    if (busy) {
      schedulePoll(); // A message is on its way: ask later.
      return;
    }
    if (document.hidden) {
      // Nobody is looking: ask rarely, which also keeps the session (and the conversation) alive.
      pollDelay = POLL_MAX_MS;
    }
    refresh();
  }

  // The transcript and who answers, as the server has them now.
  function refresh() {
    var epoch = conversationEpoch;
    return fetch(apiUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (payload) {
        if (epoch !== conversationEpoch) {
          return; // asked before the conversation shown ended: the one after it is asked for anew
        }
        if (!payload) {
          pollDelay = Math.min(pollDelay * 2, POLL_MAX_MS);
          schedulePoll();
          return;
        }
        setConversation(payload.conversation);
        var newest = payload.messages[payload.messages.length - 1];
        if (shownCount >= 0 && payload.messages.length > shownCount && newest && newest.role !== "customer") {
          announceNew(); // a reply from our team, found by polling
        }
        if (payload.messages.length !== shownCount) {
          // Whether the customer was reading the newest messages, asked before they are drawn again.
          var reading = atLatest();
          var scrolled = scroller.scrollTop;
          transcript.replaceChildren();
          payload.messages.forEach(function (message) {
            addMessage(message.role, message.text, message.name, message.turn, message.helpful, message.at, false);
          });
          if (reading) {
            showLatest();
          } else {
            scroller.scrollTop = scrolled;
            jumpLatest.hidden = false;
          }
          shownCount = payload.messages.length;
          pollDelay = POLL_FIRST_MS;
        } else {
          pollDelay = Math.min(Math.round(pollDelay * 1.5), POLL_MAX_MS);
        }
        setOffline(payload.offline);
        awaitingStore = payload.awaiting_store === true;
        applyWho(payload);
      })
      .catch(function () {
        pollDelay = Math.min(pollDelay * 2, POLL_MAX_MS);
        schedulePoll();
      });
  }

  // Feedback (a vote or a rating) for the conversation the page shows; `said` tells what came of it:
  // `done(what was stored)`'s words, or why not.
  function sendFeedback(url, body, reference, said, done) {
    if (reference) {
      body.conversation = reference;
    }
    postJson(url, body)
      .then(function (outcome) {
        said.textContent =
          outcome.status === 200 ? done(outcome.payload) : outcome.payload.detail || GENERIC_ERROR;
      })
      .catch(function () {
        said.textContent = NETWORK_ERROR;
      });
  }

  // A vote on a reply: the buttons say which answer is recorded; a second vote replaces the first.
  transcript.addEventListener("submit", function (event) {
    var vote = event.target;
    if (!vote.classList.contains("vote") || !event.submitter) {
      return;
    }
    event.preventDefault();
    var helpful = event.submitter.value === "yes";
    var thanks = vote.querySelector(".vote__thanks");
    var turn = parseInt(vote.querySelector("input[name=turn]").value, 10);
    var reference = vote.querySelector("input[name=conversation]").value;
    sendFeedback(vote.dataset.apiUrl, { turn: turn, helpful: helpful }, reference, thanks, function () {
      showVote(vote, helpful);
      return "Thanks for your feedback.";
    });
  });

  ratingForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var chosen = ratingForm.querySelector("input[name=rating]:checked");
    var comment = ratingForm.querySelector("textarea[name=comment]").value;
    var body = { rating: parseInt(chosen.value, 10), comment: comment };
    sendFeedback(ratingForm.dataset.apiUrl, body, conversationRef, ratingThanks, function (given) {
      ratingButton.textContent = "Change my rating";
      return "You rated this conversation " + given.rating + " out of 5. Thank you.";
    });
  });

  handoffForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {};
    var email = handoffEmailInput.value.trim();
    if (email) {
      body.email = email;
    }
    handoffButton.disabled = true;
    signInSettled // as a message does: the store's word on who the customer is comes first
      .then(function () {
        return postJson(handoffForm.dataset.apiUrl, body);
      })
      .then(function (outcome) {
        if (outcome.status !== 200) {
          showError(outcome.payload.detail || GENERIC_ERROR, null);
          return;
        }
        clearError();
        handoffEmailInput.value = "";
        pollDelay = POLL_FIRST_MS;
        applyWho(outcome.payload);
        showWhatHappensNext();
      })
      .catch(function () {
        showError(NETWORK_ERROR, null);
      })
      .finally(function () {
        handoffButton.disabled = false;
      });
  });

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && asksForNews()) {
      pollDelay = POLL_FIRST_MS;
      window.clearTimeout(pollTimer);
      pollTimer = null;
      refresh();
    }
  });

  // A page restored from the back/forward cache may show an old transcript.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      shownCount = -1;
      refresh();
    }
  });

  jumpLatest.addEventListener("click", showLatest);
  scroller.addEventListener("scroll", function () {
    if (atLatest()) {
      jumpLatest.hidden = true;
    }
  });
  if (!window.location.hash || window.location.hash === "#latest") {
    if (transcript.querySelector(".message")) {
      showLatest(); // A conversation under way opens on its newest messages, as a chat does.
    } else {
      scroller.scrollTop = 0; // A new one opens on its heading and introduction.
    }
  }

  setStatus(status);
  if (status === "waiting" || status === "person") {
    handoffReload.textContent = "New replies from our team appear here as they arrive.";
  }

  // In the widget's frame (widget.js): the store's page says hello, with its signed-in customer's
  // signature if it has one. Only the origins the operator listed are listened to, and only they
  // are answered.
  var widgetOrigins = document.getElementById("widget-origins");
  if (widgetOrigins && window.parent !== window) {
    var allowed = JSON.parse(widgetOrigins.textContent);
    if (!/(?:^|;\s*)csrftoken=/.test(document.cookie)) {
      // The page set its cookies and they did not come back: a browser that blocks cookies on another
      // site's page. Every message would start a new session, so offer the chat as a page of its own.
      var noCookies = document.getElementById("embed-no-cookies");
      Array.prototype.forEach.call(noCookies.parentNode.children, function (part) {
        part.hidden = part !== noCookies;
      });
    }
    // Each hello (the first, and each later BooklyWidget.signIn of a single-page shop) holds back the
    // messages sent meanwhile until the chat has the store's word on it: a message typed right after a
    // sign-in is answered knowing the customer.
    var settle = function () {};
    var awaitWord = function () {
      var before = settle;
      var resolved;
      signInSettled = new Promise(function (resolve) {
        resolved = resolve;
        window.setTimeout(resolve, 3000); // no word from a store's page: carry on as nobody
      });
      settle = function () {
        before();
        resolved();
      };
      return settle;
    };
    awaitWord();
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && storeOrigin) {
        window.parent.postMessage({ type: "bookly:close" }, storeOrigin); // the widget closes its panel
      }
    });
    window.addEventListener("message", function (event) {
      var data = event.data;
      if (allowed.indexOf(event.origin) === -1 || !data || data.type !== "bookly:hello") {
        return;
      }
      storeOrigin = event.origin;
      var settleThis = awaitWord();
      var answer = function (outcome) {
        var told = (outcome && outcome.payload) || {};
        // Whether the customer the page named is signed in now; null when the chat could not say (a limit,
        // an error): the widget tells the store's page only of a sign-in the chat refused.
        var signedIn = outcome && outcome.status === 200 ? told.signed_in === true : null;
        if (told.conversation_ended) {
          // The customer shown was signed out, or is another one now: their conversation is not
          // this person's to read. The page was drawn with it before the store said so.
          conversationGone();
        }
        settleThis();
        event.source.postMessage(
          { type: "bookly:ready", signedIn: signedIn, conversationEnded: Boolean(told.conversation_ended) },
          event.origin
        );
      };
      var customer = data.customer;
      if (customer && customer.email && customer.signature) {
        postJson("/api/chat/sign-in", {
          email: String(customer.email),
          time: Number(customer.time),
          signature: String(customer.signature),
        }).then(answer, answer);
      } else {
        // Nobody is signed in on the store's page now: nor is anyone in the chat.
        postJson("/api/chat/sign-out", {}).then(answer, answer);
      }
    });
  }
})();
