"""How the store API's document names the pydantic models it publishes."""

from pydantic import BaseModel

from connection.api.schema import _published_name


class Published(BaseModel, title="Published"):
    pass


class Unpinned(Published):
    pass


class Pinned(Published, title="Other"):
    pass


def test_a_model_is_published_by_its_own_title_never_one_it_inherited():
    # A subclass inherits its base's config, title included: named so, it would silently replace the base.
    assert [_published_name(model) for model in (Published, Unpinned, Pinned)] == [
        "Published",
        "Unpinned",
        "Other",
    ]
