"""Django finds the app's admin here; it lives in the staff room (support/staff/admin/, a module a page)."""

import support.staff.admin  # noqa: F401
