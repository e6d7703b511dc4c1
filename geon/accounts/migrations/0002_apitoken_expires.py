"""API tokens expire: tokens made before this get the default lifetime from their creation."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import migrations, models


def expire_existing(apps: Any, schema_editor: Any) -> None:
    lifetime = timedelta(days=settings.GEON_API_TOKEN_DAYS)
    ApiToken = apps.get_model("accounts", "ApiToken")
    for token in ApiToken.objects.filter(expires__isnull=True):
        token.expires = token.created + lifetime
        token.save(update_fields=["expires"])


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="apitoken", name="expires", field=models.DateTimeField(null=True)
        ),
        migrations.RunPython(expire_existing, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken", name="expires", field=models.DateTimeField()
        ),
    ]
