from django.db import models


class ItemCategory(models.TextChoices):
    """What kind of thing an order item is; the return policy excludes some kinds."""

    FICTION = "fiction", "Fiction"
    NONFICTION = "nonfiction", "Nonfiction"
    CHILDRENS = "childrens", "Children's book"
    EBOOK = "ebook", "Ebook"
    AUDIOBOOK = "audiobook", "Audiobook"
    GIFT_CARD = "gift_card", "Gift card"
    PERSONALIZED_ITEM = "personalized_item", "Personalized item"
