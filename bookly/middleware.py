from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware


class SessionMiddleware(DjangoSessionMiddleware):
    """Django's session middleware, which also saves the session on a deliberate 5xx answer.

    Django skips saving on any 5xx, assuming the request broke halfway. When the
    chat API answers 502/503 because the model is unavailable, the customer's
    message is already stored in their new conversation, and the session must
    keep pointing at it. Such responses carry `session_is_consistent = True`.
    """

    def process_response(self, request, response):
        if response.status_code >= 500 and getattr(response, "session_is_consistent", False):
            status, response.status_code = response.status_code, 200
            try:
                return super().process_response(request, response)
            finally:
                response.status_code = status
        return super().process_response(request, response)
