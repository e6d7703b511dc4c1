from django.db import migrations, models


class Migration(migrations.Migration):
    """A live edit stores its ops instead of the whole document (snapshots every N versions)."""

    dependencies = [
        ("graphs", "0002_memberships_touched_shardplans"),
    ]

    operations = [
        migrations.RenameField(model_name="graphversion", old_name="document", new_name="snapshot"),
        migrations.AlterField(
            model_name="graphversion",
            name="snapshot",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="graphversion",
            name="ops",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
