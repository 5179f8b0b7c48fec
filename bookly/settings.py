"""Bookly settings: every value comes from the environment (see .env.example)."""

import re
from datetime import date, timedelta
from ipaddress import ip_network
from pathlib import Path
from urllib.parse import urlsplit

import environ
from babel.numbers import list_currencies
from csp.constants import NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# A developer's .env fills in what the real environment leaves unset; the
# real environment always wins, so production never depends on the file.
if (BASE_DIR / ".env").is_file():
    env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        # SystemExit prints one line instead of a settings traceback.
        raise SystemExit("bookly: DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (see .env.example).")
    SECRET_KEY = "django-insecure-debug-only-key"  # noqa: S105 - debug only
# Former secret keys, while sessions, signed links and the shops' stored credentials made with one still
# count: a key is rotated by moving the old one here.
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
# The salt the shops' stored credentials' key is derived with from SECRET_KEY (connection.ShopConnection,
# django-fernet-encrypted-fields); not a secret: the key is SECRET_KEY's. Several, newest first, while
# credentials saved with an older one are read.
SALT_KEY = env.list("BOOKLY_CREDENTIALS_SALT", default=["bookly-shop-credentials"])

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "bookly.admin_site.BooklyAdminConfig",  # django.contrib.admin, filtering only by its filters
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "csp",
    "django_ratelimit",
    "axes",
    "rest_framework",
    "rest_framework_api_key",
    "drf_spectacular",
    "bookly.taskqueue",  # before django_q: its `qcluster` (one that stops on a signal) is the one run
    "django_q",
    "orders",
    "policies",
    "support",
    "connection",
]

MIDDLEWARE = [
    "bookly.middleware.ServerTimingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "bookly.middleware.PermissionsPolicyMiddleware",
    # Above the session and CSRF middleware: it sees the cookies they set.
    "bookly.middleware.WidgetCookiesMiddleware",
    "bookly.middleware.SessionMiddleware",
    "bookly.middleware.SessionLifetimeMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Staff logins: django-axes, the ecosystem's brute-force protection, counts failed
# logins per username and client address in the database (so every worker sees
# them), locks the pair out after BOOKLY_LOGIN_FAILURE_LIMIT failures, and clears
# the count BOOKLY_LOGIN_LOCKOUT_MINUTES after the last failure, which is also how
# long a lockout lasts. Lockouts show (and are cleared) in admin under "Axes".
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("BOOKLY_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("BOOKLY_LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A lockout lasts the cool-off from the failure that caused it: trying again early
# (even with the right password) does not start it over, as the lockout page promises.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Operators need to see which login and address failed; django-axes never logs or
# stores a password, whatever this list says.
AXES_SENSITIVE_PARAMETERS: list[str] = []
AXES_LOCKOUT_TEMPLATE = "axes_lockout.html"
# No "AXES: BEGIN version ..." line at every start of every command; its warnings (failed logins,
# lockouts) are logged all the same, with the lockout's parameters (username and address).
AXES_VERBOSE = False
# The client address as the rate limits see it: X-Forwarded-For only from BOOKLY_TRUSTED_PROXIES.
AXES_CLIENT_IP_CALLABLE = "support.web.ratelimits.client_ip"

ROOT_URLCONF = "bookly.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "bookly.context_processors.store_clock",
            ],
        },
    },
]

WSGI_APPLICATION = "bookly.wsgi.application"
ASGI_APPLICATION = "bookly.asgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # One connection pool per worker process (psycopg_pool). A turn gives its
    # connection back before every model call, so a handful of connections
    # serve hundreds of turns waiting on the model.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 2,
        "max_size": env.int("BOOKLY_DB_POOL_MAX_SIZE", default=10),
        "timeout": 10,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps connections, not Django
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the one writer; IMMEDIATE takes the write
    # lock when a transaction starts instead of failing mid-way with
    # "database is locked"; the timeout makes writers queue, not error.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )

FIXTURE_DIRS = [BASE_DIR / "fixtures"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("DJANGO_TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT: Path | None = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        ),
    },
}

# The store's "today": the real date unless frozen for demos and tests.
BOOKLY_TODAY = None
if _today := env.str("BOOKLY_TODAY", default=""):
    try:
        BOOKLY_TODAY = date.fromisoformat(_today)
    except ValueError:
        raise SystemExit(
            f"bookly: BOOKLY_TODAY must be an ISO date like 2026-04-14, not {_today!r}."
        ) from None

# What kind of item a shop's line is when the shop does not say (orders.kinds): kinds separated by ";",
# each a category, "=", and the words of a line's variant or title that say it. The return policy's
# non-returnable kinds then hold for what real shops sell ("Dune", variant "eBook").
BOOKLY_ITEM_KINDS = env.str(
    "BOOKLY_ITEM_KINDS",
    default="ebook=ebook,e-book,digital edition,kindle edition;audiobook=audiobook,audio book,audio cd;"
    "gift_card=gift card,gift certificate,gift voucher",
)

# The currency of an order whose shop does not say (ISO 4217): amounts are kept with their order's currency.
BOOKLY_STORE_CURRENCY = env.str("BOOKLY_STORE_CURRENCY", default="USD").upper()
if BOOKLY_STORE_CURRENCY not in list_currencies():
    raise SystemExit(
        "bookly: BOOKLY_STORE_CURRENCY must be an ISO 4217 code like USD, EUR or BRL, "
        f"not {BOOKLY_STORE_CURRENCY!r}."
    )

# Shopify's webhooks (connection.shopify): the app's client secret they are signed with. Empty: the
# store is not connected to Shopify and its webhook address answers 404.
SHOPIFY_WEBHOOK_SECRET = env.str("SHOPIFY_WEBHOOK_SECRET", default="")
# The shop (its myshopify.com domain) whose deliveries are taken, when one app serves several shops:
# another shop's are refused. Empty: any shop the app's secret signs for.
SHOPIFY_SHOP_DOMAIN = env.str("SHOPIFY_SHOP_DOMAIN", default="").strip().lower()
# WooCommerce's webhooks (connection.woocommerce): the secret given to each webhook in WooCommerce
# (Settings > Advanced > Webhooks). Empty: not connected.
WOOCOMMERCE_WEBHOOK_SECRET = env.str("WOOCOMMERCE_WEBHOOK_SECRET", default="")
# The sites whose deliveries are taken (their addresses, X-WC-Webhook-Source, separated by spaces); empty:
# any site that signs with the secret (sites typing one secret sign each other's).
WOOCOMMERCE_WEBHOOK_SOURCES = env.str("WOOCOMMERCE_WEBHOOK_SOURCES", default="")
# Reading the shop's orders for `manage.py shop_sync` (connection.shop_sync). Shopify: a custom app's
# Admin API access token (scope read_orders, and write_orders for SHOP_WRITE_BACK) for
# SHOPIFY_SHOP_DOMAIN, the API version, and the Admin API's address when it is not
# https://<domain>/admin/api/<version> (a proxy).
SHOPIFY_ADMIN_ACCESS_TOKEN = env.str("SHOPIFY_ADMIN_ACCESS_TOKEN", default="")
SHOPIFY_API_VERSION = env.str("SHOPIFY_API_VERSION", default="2025-07")
SHOPIFY_ADMIN_API_URL = env.str("SHOPIFY_ADMIN_API_URL", default="")
# WooCommerce: the store's address and a REST API key (WooCommerce > Settings > Advanced > REST API,
# permission Read).
WOOCOMMERCE_URL = env.str("WOOCOMMERCE_URL", default="")
WOOCOMMERCE_CONSUMER_KEY = env.str("WOOCOMMERCE_CONSUMER_KEY", default="")
WOOCOMMERCE_CONSUMER_SECRET = env.str("WOOCOMMERCE_CONSUMER_SECRET", default="")
# WooCommerce's core has no delivery: a `completed` order counts as delivered this many days after it
# was completed (its return window then opens); 0: never (it stays shipped).
WOOCOMMERCE_DELIVERED_AFTER_DAYS = env.int("WOOCOMMERCE_DELIVERED_AFTER_DAYS", default=7)
if not 0 <= WOOCOMMERCE_DELIVERED_AFTER_DAYS <= 365:
    raise SystemExit("bookly: WOOCOMMERCE_DELIVERED_AFTER_DAYS is a number of days from 0 to 365.")
# Write-back: a cancellation or an address change of an order a platform sent is made in the shop
# first, through the same key (Shopify: scope write_orders; WooCommerce: permission Read/Write), and
# is Bookly's (and the customer's email says so) only once the shop made it. Off unless asked for, as a
# key made for shop_sync may read only: then every change would wait for a shop that refuses it. Off,
# changes stay in Bookly alone (the shop is told through Bookly's own webhooks).
SHOP_WRITE_BACK = env.bool("SHOP_WRITE_BACK", default=False)
# The orders' sources (orders.models.OrderSource) whose changes go through their shop: a setting of its
# own, so that the order domain reads which, never the connection.
BOOKLY_CHANGES_THROUGH_SHOP = [
    source
    for source, key in (
        ("shopify", SHOPIFY_ADMIN_ACCESS_TOKEN),
        ("woocommerce", WOOCOMMERCE_CONSUMER_KEY and WOOCOMMERCE_CONSUMER_SECRET and WOOCOMMERCE_URL),
    )
    if SHOP_WRITE_BACK and key
]

# The countries an unshipped order may be re-addressed to besides its own (ISO 3166 codes, or * for
# any): by default none, as a change abroad changes its rates, duties and carrier (a person can).
BOOKLY_ADDRESS_CHANGE_COUNTRIES = frozenset(
    code.strip().upper() for code in env.list("BOOKLY_ADDRESS_CHANGE_COUNTRIES", default=[]) if code.strip()
)
if any(not re.fullmatch(r"[A-Z]{2}|\*", code) for code in BOOKLY_ADDRESS_CHANGE_COUNTRIES):
    raise SystemExit("bookly: BOOKLY_ADDRESS_CHANGE_COUNTRIES lists ISO 3166 country codes (AU,NZ) or *.")

# The shape of the store's order numbers, a regular expression an order number matches whole, and one
# number of that shape for the assistant's "it looks like …" (the demo's: BK- and 4 to 6 digits).
BOOKLY_ORDER_NUMBER_PATTERN = env.str("BOOKLY_ORDER_NUMBER_PATTERN", default=r"BK-[0-9]{4,6}")
BOOKLY_ORDER_NUMBER_EXAMPLE = env.str("BOOKLY_ORDER_NUMBER_EXAMPLE", default="BK-10042")
if BOOKLY_ORDER_NUMBER_PATTERN.startswith("^") or BOOKLY_ORDER_NUMBER_PATTERN.endswith("$"):
    raise SystemExit("bookly: BOOKLY_ORDER_NUMBER_PATTERN is matched whole: leave out ^ and $.")
try:
    _order_number = re.compile(BOOKLY_ORDER_NUMBER_PATTERN)
    re.compile(rf"(?<![\w-])(?:{BOOKLY_ORDER_NUMBER_PATTERN})(?![\w-])")  # found in running text too
except re.error as _error:
    raise SystemExit(
        f"bookly: BOOKLY_ORDER_NUMBER_PATTERN is not a regular expression without inline flags ({_error})."
    ) from None
if _order_number.fullmatch("") or not _order_number.fullmatch(BOOKLY_ORDER_NUMBER_EXAMPLE):
    raise SystemExit(
        "bookly: BOOKLY_ORDER_NUMBER_PATTERN must match its example BOOKLY_ORDER_NUMBER_EXAMPLE "
        f"({BOOKLY_ORDER_NUMBER_EXAMPLE!r}) and no empty number."
    )
if len(BOOKLY_ORDER_NUMBER_EXAMPLE) > 32:
    raise SystemExit("bookly: an order number holds at most 32 characters (BOOKLY_ORDER_NUMBER_EXAMPLE).")
# The shapes the store's numbers had before, separated by spaces (`BK-[0-9]{4,6}`): orders stored with
# them are still found, by customers, the tools and the store API. `manage.py migrate` refuses to run
# while stored orders have a number of no shape listed.
BOOKLY_ORDER_NUMBER_FORMER_PATTERNS = env.str("BOOKLY_ORDER_NUMBER_FORMER_PATTERNS", default="").split()
for _former in BOOKLY_ORDER_NUMBER_FORMER_PATTERNS:
    try:
        if re.compile(_former).fullmatch("") or _former.startswith("^") or _former.endswith("$"):
            raise SystemExit(
                f"bookly: BOOKLY_ORDER_NUMBER_FORMER_PATTERNS: {_former!r} matches an empty number or has ^ "
                "or $ (each is matched whole)."
            )
        re.compile(rf"(?<![\w-])(?:{_former})(?![\w-])")
    except re.error as _error:
        raise SystemExit(
            f"bookly: BOOKLY_ORDER_NUMBER_FORMER_PATTERNS: {_former!r} is not a regular expression without "
            f"inline flags ({_error})."
        ) from None

# The assistant's settings (its model, the limits of a turn and a conversation), read from the same
# environment: a module of their own, bookly/settings_assistant.py.
from bookly.settings_assistant import *  # noqa: E402, F403

# The chat widget on the store's own pages (README, "On your website"): the origins whose pages may
# show the chat in a frame, like https://shop.example.com. Empty: no page may frame it.
BOOKLY_WIDGET_ORIGINS = env.list("BOOKLY_WIDGET_ORIGINS", default=[])
for _origin in BOOKLY_WIDGET_ORIGINS:
    _parts = urlsplit(_origin)
    if _parts.scheme not in ("http", "https") or not _parts.netloc or _parts.path or _parts.query:
        raise SystemExit(
            f"bookly: BOOKLY_WIDGET_ORIGINS: {_origin!r} is not an origin (scheme://host[:port] alone)."
        )

# Signed-in customers (support.conversations.identity): the secret the store's backend signs a
# customer's email with; empty, nobody is signed in. How long a signature stays usable.
BOOKLY_CUSTOMER_SIGNING_SECRET = env.str("BOOKLY_CUSTOMER_SIGNING_SECRET", default="")
BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS = env.int("BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS", default=600)

# Events for the store's systems (orders.Event) and their webhook deliveries are kept this long once done
# with (`manage.py purge_events`, daily from cron).
BOOKLY_EVENT_RETENTION_DAYS = env.int("BOOKLY_EVENT_RETENTION_DAYS", default=30)

# People in the loop: what a customer asking for a person is told, and who hears of it.
BOOKLY_SUPPORT_HOURS = env.str("BOOKLY_SUPPORT_HOURS", default="Monday to Friday, 9:00 to 17:00 (UTC)")
BOOKLY_SUPPORT_REPLY_TIME = env.str("BOOKLY_SUPPORT_REPLY_TIME", default="within one business day")
BOOKLY_STAFF_IDLE_MINUTES = env.int("BOOKLY_STAFF_IDLE_MINUTES", default=15)
BOOKLY_SUPPORT_EMAIL = env.str("BOOKLY_SUPPORT_EMAIL", default="support@bookly.example")
# Where staff reach the site, for links in the emails they get.
BOOKLY_SITE_URL = env.str("BOOKLY_SITE_URL", default="http://127.0.0.1:8000")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Bookly support <support@bookly.example>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Unset: email is printed to the console. EMAIL_URL (smtp+tls://, smtp+ssl://) sends it.
# Seconds a mail server may take before a send gives up (the email stays in the outbox to retry): an
# unanswering server must not hold a customer's turn or a staff request.
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
if env.str("EMAIL_URL", default=""):
    globals().update(env.email_url("EMAIL_URL"))
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

# --- Security, sessions, rate limits and cache ---------------------------------
# Defaults are the production values; .env.example turns the HTTPS-only ones off
# for scripts/run, which serves plain HTTP on 127.0.0.1. See README, "Security".

# HTTPS. SSL redirect and HSTS apply only when the site is served over HTTPS.
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
# Load balancers often probe over plain HTTP inside the network, and Prometheus
# scrapes the workers directly.
SECURE_REDIRECT_EXEMPT = [r"^health$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=False)
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    # Only behind a proxy that terminates TLS and always sets this header itself:
    # otherwise any client could claim to be on HTTPS.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Response headers: Django's SecurityMiddleware and XFrameOptionsMiddleware set
# these; bookly.middleware.PermissionsPolicyMiddleware adds Permissions-Policy.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp 4). Our pages load only their own static
# files: no inline script or style, nothing from another origin. Django admin
# needs nothing more (a browser test watches it for violations).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

# Cookies. Secure (HTTPS-only) cookies by default; HttpOnly keeps the session
# away from scripts. The CSRF cookie stays readable: chat.js sends it back in
# the X-CSRFToken header, the way Django documents for JavaScript clients.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_HTTPONLY = False
# A refused form or API call gets a page (or JSON) in words, not Django's bare 403.
CSRF_FAILURE_VIEW = "bookly.views.csrf_failure"

# Session lifetime. Inactivity: a session unused for SESSION_COOKIE_AGE seconds
# expires (cookie and database row). SessionLifetimeMiddleware renews it at most
# once a minute while the visitor is active, rather than SESSION_SAVE_EVERY_REQUEST,
# which writes the session on every request (and lets a slow chat turn write back
# a stale copy). Maximum age: the middleware ends any session older than
# BOOKLY_SESSION_MAX_AGE_SECONDS, however active. Run `manage.py clearsessions`
# daily to delete expired rows.
SESSION_COOKIE_AGE = env.int("BOOKLY_SESSION_IDLE_MINUTES", default=60) * 60
SESSION_SAVE_EVERY_REQUEST = False
BOOKLY_SESSION_MAX_AGE_SECONDS = env.int("BOOKLY_SESSION_MAX_AGE_HOURS", default=12) * 3600

# Rate limits on sending chat messages (the page's form and the JSON API share
# them), in django-ratelimit's format: a count per s, m, h or d, e.g. 30/m or 100/5m.
BOOKLY_RATELIMIT_IP = env.str("BOOKLY_RATELIMIT_IP", default="30/m")
BOOKLY_RATELIMIT_SESSION = env.str("BOOKLY_RATELIMIT_SESSION", default="20/m")
# The customer's other writes (votes, ratings, new conversations), per client IP and per session.
BOOKLY_RATELIMIT_ACTIONS = env.str("BOOKLY_RATELIMIT_ACTIONS", default="30/m")
# Requests to the store API per key (the shop's backend), in the same format.
BOOKLY_STORE_API_RATE = env.str("BOOKLY_STORE_API_RATE", default="600/m")
# Guessed store API keys (no key of ours) per client IP; past it, that address's guesses get 429 (the
# shop's keys, right, revoked or expired, are never counted nor held up).
BOOKLY_STORE_API_KEY_FAILURES = env.str("BOOKLY_STORE_API_KEY_FAILURES", default="10/m")
for _name, _rate in (
    ("BOOKLY_STORE_API_RATE", BOOKLY_STORE_API_RATE),
    ("BOOKLY_STORE_API_KEY_FAILURES", BOOKLY_STORE_API_KEY_FAILURES),
    ("BOOKLY_RATELIMIT_IP", BOOKLY_RATELIMIT_IP),
    ("BOOKLY_RATELIMIT_SESSION", BOOKLY_RATELIMIT_SESSION),
    ("BOOKLY_RATELIMIT_ACTIONS", BOOKLY_RATELIMIT_ACTIONS),
):
    if not re.fullmatch(r"[1-9]\d*/\d*[smhd]", _rate):
        raise SystemExit(f"bookly: {_name} must be a rate like 30/m (count/period), not {_rate!r}.")


def _ip_networks(name: str) -> list[str]:
    """A comma-separated list of IP addresses or networks (CIDR) from the environment."""
    values = [value.strip() for value in env.list(name, default=[])]
    for value in values:
        try:
            ip_network(value, strict=False)
        except ValueError:
            raise SystemExit(f"bookly: {name} must list IP addresses or networks, not {value!r}.") from None
    return values


# Addresses (or networks) of reverse proxies in front of Bookly. Only a request
# arriving from one of them has its X-Forwarded-For read, and then the client is
# the right-most address in it that is not a trusted proxy. Empty: REMOTE_ADDR
# is the client, and X-Forwarded-For is ignored (anyone can send it).
BOOKLY_TRUSTED_PROXIES = _ip_networks("BOOKLY_TRUSTED_PROXIES")
# GET /metrics (Prometheus) is served to this machine (a direct request, not one
# through a proxy), to these addresses or networks, or to a request with
# "Authorization: Bearer <BOOKLY_METRICS_TOKEN>"; to no one else.
BOOKLY_METRICS_ALLOWED_IPS = _ip_networks("BOOKLY_METRICS_ALLOWED_IPS")
BOOKLY_METRICS_TOKEN = env.str("BOOKLY_METRICS_TOKEN", default="")

# The staff dashboard's cost estimate: the model's price per million tokens of each kind
# (defaults: $3 input, $15 output, $0.30 cache read, $3.75 cache write: Claude Sonnet's list prices when
# this was written; set your model's current ones).
BOOKLY_PRICE_INPUT_PER_MTOK = env.float("BOOKLY_PRICE_INPUT_PER_MTOK", default=3.0)
BOOKLY_PRICE_OUTPUT_PER_MTOK = env.float("BOOKLY_PRICE_OUTPUT_PER_MTOK", default=15.0)
BOOKLY_PRICE_CACHE_READ_PER_MTOK = env.float("BOOKLY_PRICE_CACHE_READ_PER_MTOK", default=0.30)
BOOKLY_PRICE_CACHE_WRITE_PER_MTOK = env.float("BOOKLY_PRICE_CACHE_WRITE_PER_MTOK", default=3.75)
BOOKLY_PRICE_CURRENCY = env.str("BOOKLY_PRICE_CURRENCY", default="USD")
# django-ratelimit's "ip" key asks this function for the client's address.
RATELIMIT_IP_META_KEY = "support.web.ratelimits.client_ip"

# Cache: the rate-limit counters (and, with Redis, the sessions) live here.
# Local memory suits one process (scripts/run). Several worker processes or
# machines need REDIS_URL: then the counters are shared, incremented atomically
# (django-redis uses Redis INCR; Django's own Redis backend reads then writes).
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis outage must fail a request quickly, not hang a worker thread.
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
        }
    }
    # Sessions read from Redis and written through to the database, which stays
    # the source of truth (a Redis restart logs nobody out).
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "bookly"}}
SILENCED_SYSTEM_CHECKS = []
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache":
    # django-ratelimit flags local memory as "not a shared cache" (E003) and
    # "not officially supported" (W001): true, and fine for one process.
    SILENCED_SYSTEM_CHECKS += ["django_ratelimit.E003", "django_ratelimit.W001"]
# HSTS preload is the domain owner's opt-in (set DJANGO_SECURE_HSTS_PRELOAD=true
# and submit the domain to hstspreload.org); `check --deploy` need not nag about it.
SILENCED_SYSTEM_CHECKS += ["security.W021"]

# Adds a Server-Timing header (app, model and database time, query count) to
# chat API answers: for benchmarks and debugging, not for the public site.
BOOKLY_SERVER_TIMING = env.bool("BOOKLY_SERVER_TIMING", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("BOOKLY_LOG_LEVEL", default="INFO")},
    # The SDK's HTTP client logs every request URL at INFO; keep only its warnings.
    "loggers": {"httpx2": {"level": "WARNING"}, "httpcore2": {"level": "WARNING"}},
}

# Webhooks: seconds an endpoint has to answer, and whether endpoint URLs may reach loopback, private
# or link-local addresses (never in production: a URL must not reach into Bookly's own network).
BOOKLY_WEBHOOK_TIMEOUT_SECONDS = env.float("BOOKLY_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = env.bool("BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS", default=False)
# The task queue: django-q2 (maintained, Django-native, no extra service needed). Its workers deliver
# webhooks and customer emails; `manage.py qcluster` runs them (scripts/run starts it beside the site).
# The queue lives in the database by default (SQLite for zero setup, PostgreSQL in production, where
# workers on several machines share it); BOOKLY_TASK_BROKER=redis keeps it in REDIS_URL instead.
BOOKLY_TASK_BROKER = env.str("BOOKLY_TASK_BROKER", default="database")
if BOOKLY_TASK_BROKER not in ("database", "redis") or (BOOKLY_TASK_BROKER == "redis" and not REDIS_URL):
    raise SystemExit("bookly: BOOKLY_TASK_BROKER must be database, or redis with REDIS_URL set.")
Q_CLUSTER = {
    "name": "bookly",
    "workers": env.int("BOOKLY_TASK_WORKERS", default=2),
    # A task runs at most `timeout` seconds (longer than a webhook attempt's lease: four network
    # waits); one taken by a worker that died is handed out again after `retry` seconds (our tasks
    # check the rows first, so running twice does no harm).
    "timeout": int(4 * BOOKLY_WEBHOOK_TIMEOUT_SECONDS + 60),
    "retry": int(4 * BOOKLY_WEBHOOK_TIMEOUT_SECONDS + 120),
    "max_attempts": 5,
    "ack_failures": True,
    "save_limit": 1000,
    "catch_up": False,
    "poll": 1,
    "label": "Task queue",
    **({"redis": REDIS_URL} if BOOKLY_TASK_BROKER == "redis" else {"orm": "default"}),
}
# SIGTERM or SIGINT to `manage.py qcluster` (or its process group) stops it: the tasks its workers hold
# may finish for this long (by default long enough for a webhook attempt's four network waits), then
# whatever still runs is killed and handed out again after `retry`. A supervisor's stop timeout must be
# longer (systemd TimeoutStopSec, docker stop -t, Kubernetes terminationGracePeriodSeconds).
BOOKLY_TASK_STOP_GRACE_SECONDS = env.float(
    "BOOKLY_TASK_STOP_GRACE_SECONDS", default=4 * BOOKLY_WEBHOOK_TIMEOUT_SECONDS + 10
)

# Admin's messages live in the session, on the server: a secret shown once (an API key, a webhook
# signing secret) must never travel in a cookie, even a signed one.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# The store API (connection.api): Django REST Framework, JSON only, authenticated by the shop's API key
# alone (never a session cookie), every error as {"error": {"code", "message", ...}}.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "connection.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {"store_api": BOOKLY_STORE_API_RATE},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Bookly store API",
    "DESCRIPTION": "For the shop's backend: its orders in, Bookly's returns out.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # 3.1: the events' bodies are described as OpenAPI 3.1 webhooks, and JSON Schema's null types.
    "OAS_VERSION": "3.1.0",
    "COMPONENT_SPLIT_REQUEST": True,
    # pydantic names its enums itself: drf-spectacular's enum hook would rename them (StatusEnum,
    # BlankEnum). Ours adds the webhooks' components.
    "POSTPROCESSING_HOOKS": ["connection.api.schema.webhook_components"],
    "WEBHOOKS": [
        f"connection.api.schema.{name}"
        for name in (
            "RETURN_CREATED",
            "RETURN_STATUS_CHANGED",
            "ORDER_CANCELLED",
            "ORDER_ADDRESS_CHANGED",
            "DELIVERY_CASE_OPENED",
            "DELIVERY_CASE_RESOLVED",
            "CONVERSATION_HANDED_OFF",
            "CONVERSATION_EMAIL_GIVEN",
        )
    ],
}
