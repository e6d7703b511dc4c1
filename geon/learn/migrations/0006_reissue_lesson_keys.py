"""Issue 30, finding 5: lessons written before publishing became the owner's act.

- A lesson written by someone who does not own its graph (an editor) is withdrawn: deleted.
  Classes it was assigned to show it as withdrawn; students keep their copies.
- Every other lesson is re-issued: a new key of the title's slug and 128 random bits (the old
  ones had 24 and stop working: they answer 404), and it publishes the graph's current version.
  Assignments, step checks and students' copies (``Graph.example``) follow the new key, so
  classes go on as before; the owner finds the new link in the editor's lesson panel.
"""

import secrets

from django.db import migrations
from django.utils.text import slugify


def reissue(apps, schema_editor):
    WrittenLesson = apps.get_model("learn", "WrittenLesson")
    Assignment = apps.get_model("learn", "Assignment")
    LessonCheck = apps.get_model("learn", "LessonCheck")
    Graph = apps.get_model("graphs", "Graph")
    GraphVersion = apps.get_model("graphs", "GraphVersion")
    for written in WrittenLesson.objects.select_related("graph").order_by("pk"):
        graph = written.graph
        version = GraphVersion.objects.filter(pk=graph.current_version_id).first()
        if written.author_id != graph.owner_id or version is None:
            written.delete()
            continue
        old = written.key
        slug = slugify(written.title)[:40].strip("-") or "lesson"
        new = f"{slug}-{secrets.token_urlsafe(16)}"
        written.key, written.version = new, version.number
        written.save(update_fields=["key", "version"])
        Assignment.objects.filter(kind="lesson", key=old).update(key=new)
        LessonCheck.objects.filter(lesson=old).update(lesson=new)
        Graph.objects.filter(example=f"lesson:{old}").update(example=f"lesson:{new}")


class Migration(migrations.Migration):
    dependencies = [
        ("graphs", "0010_version_summary"),
        ("learn", "0005_visitor_quotas_and_published_versions"),
    ]

    operations = [migrations.RunPython(reissue, migrations.RunPython.noop)]
