"""URL routes: the pages, ``/healthz``, the admin and the REST API, whose routers are mounted
here (each app's ``api`` module; :mod:`geon.api` holds the instance, its auth and errors).
Websocket routes live in :mod:`geon.graphs.routing`."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from geon.accounts.api import router as tokens_router
from geon.accounts.views import SignInView, account_page
from geon.api import api, docs_script
from geon.graphs import sharing_views
from geon.graphs import views as graph_views
from geon.graphs.api import router as graphs_router
from geon.graphs.cost_api import router as cost_router
from geon.graphs.search_api import router as search_router
from geon.graphs.sharing_api import router as sharing_router
from geon.graphs.training_api import router as training_router
from geon.learn import views as learn_views
from geon.learn.api import router as learn_router
from geon.learn.classes_api import router as classes_router
from geon.reviews import views as review_views
from geon.reviews.api import router as reviews_router
from geon.runs import views as run_views
from geon.runs.api import router as runs_router
from geon.runs.imports_api import router as imports_router

api.add_router("", search_router)
api.add_router("", graphs_router)
api.add_router("", cost_router)
api.add_router("", sharing_router)
api.add_router("", training_router)
api.add_router("", tokens_router)
api.add_router("", runs_router)
api.add_router("", imports_router)
api.add_router("", reviews_router)
api.add_router("", learn_router)
api.add_router("", classes_router)

urlpatterns = [
    path("", graph_views.graph_list, name="graph-list"),
    path("graphs/<uuid:graph_id>/", graph_views.graph_editor, name="graph-editor"),
    path(
        "graphs/<uuid:graph_id>/diff/<int:base>/<int:target>/",
        graph_views.graph_diff,
        name="graph-diff",
    ),
    path("gallery/<slug:key>/open/", graph_views.gallery_open, name="gallery-open"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/profile/", account_page, name="account"),
    # django-allauth: sign-up, email verification, password reset and change, email addresses
    # (its own login page stays behind geon's, which is throttled and keeps the name "login")
    path("accounts/", include("allauth.urls")),
    path("invite/<str:key>/", sharing_views.invitation, name="invitation"),
    path("s/<str:key>/", sharing_views.shared_link, name="shared-link"),
    path("teams/", sharing_views.teams_page, name="teams"),
    path("reviews/", review_views.reviews_page, name="reviews-for-me"),
    path("learn/", learn_views.lessons_page, name="lessons"),
    path("learn/puzzles/<slug:key>/", learn_views.open_puzzle, name="puzzle-open"),
    path("learn/try/<slug:key>/", learn_views.try_lesson, name="lesson-try"),
    path("learn/try/puzzles/<slug:key>/", learn_views.try_puzzle, name="puzzle-try"),
    path("learn/classes/", learn_views.classes_page, name="classes"),
    path("learn/classes/<int:class_id>/", learn_views.class_page, name="class"),
    path("learn/join/<str:key>/", learn_views.join_class, name="class-join"),
    path("learn/progress/", learn_views.my_progress_page, name="my-progress"),
    path(
        "learn/classes/<int:class_id>/students/<str:student>/items/<int:assignment_id>/",
        learn_views.student_work,
        name="class-work",
    ),
    path(
        "learn/classes/<int:class_id>/students/<str:student>/items/<int:assignment_id>/graph.svg",
        learn_views.student_graph,
        name="class-work-graph",
    ),
    # after the fixed paths above: a lesson's key is any slug
    path("learn/<slug:key>/", learn_views.open_lesson, name="lesson-open"),
    path("healthz", run_views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/docs.js", docs_script, name="api-docs-script"),
    path("api/v1/", api.urls),
]

# Unhandled exceptions: a database that is briefly unavailable answers 503, anything else 500;
# the JSON envelope under /api/, a page elsewhere. A body over the limit answers 413 under /api/.
handler400 = "geon.envelope.bad_request"
handler500 = "geon.envelope.server_error"
