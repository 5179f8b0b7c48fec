"""A credential kept encrypted: django-fernet-encrypted-fields' field, made safe under threads."""

from django.db import models
from encrypted_fields.fields import EncryptedCharField


class SecretField(EncryptedCharField):
    """Fernet-encrypted text (django-fernet-encrypted-fields 0.4). Its clean() marks the field object
    itself "already decrypted" while a form is cleaned, and that one object is every thread's: a
    credential read meanwhile in another thread came back as its ciphertext. Here clean() is CharField's,
    with no mark (a value typed in is plain text, which the library's to_python leaves as it is)."""

    def clean(self, value: object, model_instance: models.Model | None) -> str | None:
        text = models.CharField.to_python(self, value)
        self.validate(text, model_instance)
        self.run_validators(text)
        return text
