from django.apps import AppConfig


class LearnConfig(AppConfig):
    """Lessons (and, later, puzzles and classes) for students and teachers of named axes."""

    name = "geon.learn"
    label = "learn"
