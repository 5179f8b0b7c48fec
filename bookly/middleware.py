import os
import time
from contextlib import ExitStack
from http.cookies import Morsel

from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.core.exceptions import MiddlewareNotUsed
from django.db import connections

from support.conversations.models import ConversationEnd
from support.conversations.selectors import SIGNED_IN_SESSION_KEY
from support.conversations.services import conversation_end_for_session


class SessionMiddleware(DjangoSessionMiddleware):
    """Django's session middleware, which also saves the session on a deliberate 5xx answer, and never
    writes back a sign-in another request changed meanwhile.

    Django skips saving on any 5xx, assuming the request broke halfway. When the
    chat API answers 502/503 because the model is unavailable, the customer's
    message is already stored in their new conversation, and the session must
    keep pointing at it. Such responses carry `session_is_consistent = True`.

    A request saves its whole copy of the session, read when it started. A slow
    one (a chat turn) that saves it (a message for the next page, unsent words)
    after the store signed its customer out on another request would sign them
    back in: unless this request itself signed someone in or out, the sign-in
    saved is the one stored now.
    """

    def process_request(self, request):
        super().process_request(request)
        if request.COOKIES.get(settings.SESSION_COOKIE_NAME):
            request.signed_in_as_read = request.session.get(SIGNED_IN_SESSION_KEY)

    def process_response(self, request, response):
        session = getattr(request, "session", None)
        if (
            session is not None
            and session.modified
            and session.session_key
            and hasattr(request, "signed_in_as_read")
            and session.get(SIGNED_IN_SESSION_KEY) == request.signed_in_as_read
        ):
            # A separate store: loading a session that is gone must not change this one's key.
            stored = type(session)(session_key=session.session_key).load().get(SIGNED_IN_SESSION_KEY)
            if stored != request.signed_in_as_read:
                session.pop(SIGNED_IN_SESSION_KEY, None)
                if stored is not None:
                    session[SIGNED_IN_SESSION_KEY] = stored
        if response.status_code >= 500 and getattr(response, "session_is_consistent", False):
            status, response.status_code = response.status_code, 200
            try:
                return super().process_response(request, response)
            finally:
                response.status_code = status
        return super().process_response(request, response)


# Browser features no Bookly page uses, switched off for every page and anything embedded in it.
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=()"


class PermissionsPolicyMiddleware:
    """Adds Permissions-Policy, the one security header Django does not set itself."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response


class _PartitionedMorsel(Morsel):
    """A cookie with the Partitioned attribute, which Python's cookies (before 3.14) cannot write."""

    def OutputString(self, attrs=None):
        return f"{super().OutputString(attrs)}; Partitioned"


class WidgetCookiesMiddleware:
    """With the widget on (BOOKLY_WIDGET_ORIGINS), the chat runs in a frame of the store's pages, a
    third party there: its session and CSRF cookies must be sent to it (SameSite=None, which browsers
    take only with Secure) and are kept apart per store site (Partitioned, CHIPS: current Chrome,
    Edge and Firefox keep them; without it, browsers that block third-party cookies would drop them).
    The CSRF check still holds: the frame's own requests carry the token and the chat's own Origin.
    Staff's cookies (anyone logged in) are left SameSite=Lax."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not settings.BOOKLY_WIDGET_ORIGINS:
            return response
        names = [
            name
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME)
            if name in response.cookies
        ]
        if not names or _is_logged_in(request):
            return response
        for name in names:
            cookie = response.cookies[name]
            partitioned = _PartitionedMorsel()
            partitioned.set(cookie.key, cookie.value, cookie.coded_value)
            partitioned.update({key: value for key, value in cookie.items() if value})
            partitioned["samesite"], partitioned["secure"] = "None", True
            dict.__setitem__(response.cookies, name, partitioned)
        return response


def _is_logged_in(request) -> bool:
    """Someone logged in (staff, on admin or anywhere; the admin login's own answer included, as
    login() sets request.user): their cookies keep SameSite=Lax. Only the customer's chat runs in a
    store's frame; a staff session sent along with other sites' requests would let them ride on it."""
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


class SessionLifetimeMiddleware:
    """Ends sessions at a maximum age, and keeps active ones from expiring for inactivity.

    Django expires a session SESSION_COOKIE_AGE seconds after it was last saved.
    Saving it on every request (SESSION_SAVE_EVERY_REQUEST) would renew it, but
    writes to the database on every request, and a slow chat turn would save a
    stale copy over changes made meanwhile. This saves it at most once a minute
    while the visitor is active, when the request starts. Independently, a session older than
    BOOKLY_SESSION_MAX_AGE_SECONDS is emptied and given a new key, however
    active it is: a stolen or forgotten session does not live forever (its
    chat conversation ends too).
    Goes after SessionMiddleware and before AuthenticationMiddleware.
    """

    SEEN_KEY = "_bookly_seen_at"
    STARTED_KEY = "_bookly_started_at"
    RENEW_AFTER_SECONDS = 60

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = request.session
        # Only sessions the visitor already holds: never create one here. An
        # expired or unknown session key loads as no keys.
        if request.COOKIES.get(settings.SESSION_COOKIE_NAME) and session.keys():
            now = int(time.time())
            started = session.setdefault(self.STARTED_KEY, now)
            if now - started > settings.BOOKLY_SESSION_MAX_AGE_SECONDS:
                # Its chat ends with it: the new session cannot reach it, and staff must see the
                # customer has left rather than answer into a page nobody has any more.
                conversation_end_for_session(session=session, reason=ConversationEnd.SESSION_EXPIRED)
                session.flush()
            elif now - session.get(self.SEEN_KEY, 0) >= self.RENEW_AFTER_SECONDS:
                # Saved now, not with the response: a slow request (a chat turn) saving its copy at
                # the end would write back what another request changed meanwhile (a store's
                # sign-out: the customer would be signed in again).
                session[self.SEEN_KEY] = now
                session.save()
                session.modified = False
        return self.get_response(request)


class ServerTimingMiddleware:
    """With BOOKLY_SERVER_TIMING on, says where a request's time went, in a Server-Timing header.

    It gives the whole request (app), waiting for the model (model, set by the
    chat API), the database (db, with the number of queries), and which worker
    process answered. It goes first, so that it sees the session being saved too.
    """

    def __init__(self, get_response):
        if not settings.BOOKLY_SERVER_TIMING:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        queries = _QueryTimer()
        started = time.perf_counter()
        with ExitStack() as stack:
            for connection in connections.all():
                stack.enter_context(connection.execute_wrapper(queries))
            response = self.get_response(request)
        app_ms = (time.perf_counter() - started) * 1000
        model_ms = getattr(request, "model_ms", 0)
        response["Server-Timing"] = (
            f"app;dur={app_ms:.1f}, model;dur={model_ms:.1f}, "
            f'db;dur={queries.seconds * 1000:.1f};desc="{queries.count} queries", '
            f'worker;desc="{os.getpid()}"'
        )
        return response


class _QueryTimer:
    def __init__(self):
        self.count = 0
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.count += 1
            self.seconds += time.perf_counter() - started
