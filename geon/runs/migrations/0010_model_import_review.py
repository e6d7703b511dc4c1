# The rename step of a model import (issue 35): an import may stop for its axes' names.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0009_run_engine"),
    ]

    operations = [
        migrations.AddField(
            model_name="modelimport",
            name="review",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="modelimport",
            name="axes",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="modelimport",
            name="names",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
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
                ],
                default="queued",
                max_length=16,
            ),
        ),
    ]
