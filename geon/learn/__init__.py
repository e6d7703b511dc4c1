"""Teaching mode on the server (issue 19): the lessons of :mod:`geon.learn.content.lessons` as pages
and an API, each student working on their own copy of a lesson's graph."""
