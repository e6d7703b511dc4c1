# An import left in review (issue 35) over GEON_IMPORT_REVIEW_HOURS is swept: status expired.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0010_model_import_review"),
    ]

    operations = [
        migrations.AlterField(
            model_name="modelimport",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("review", "Review"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                    ("expired", "Expired"),
                ],
                default="queued",
                max_length=16,
            ),
        ),
    ]
