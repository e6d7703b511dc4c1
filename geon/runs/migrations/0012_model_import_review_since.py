# When an import stopped in review (issue 35): the sweep's GEON_IMPORT_REVIEW_HOURS count from
# here, not from the upload. Imports already in review count from their upload, as before.

from django.db import migrations, models
from django.db.models import F


def since_upload(apps, schema_editor):  # type: ignore[no-untyped-def]
    ModelImport = apps.get_model("runs", "ModelImport")
    ModelImport.objects.filter(status="review").update(review_since=F("created"))


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0011_model_import_expired"),
    ]

    operations = [
        migrations.AddField(
            model_name="modelimport",
            name="review_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(since_upload, migrations.RunPython.noop),
    ]
