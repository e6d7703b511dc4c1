"""URL routes. Websocket routes live in :mod:`geon.graphs.routing`."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from geon.accounts.views import SignInView
from geon.api import api, docs_script
from geon.graphs import views as graph_views
from geon.runs import views as run_views

urlpatterns = [
    path("", graph_views.graph_list, name="graph-list"),
    path("graphs/<uuid:graph_id>/", graph_views.graph_editor, name="graph-editor"),
    path("graphs/<uuid:graph_id>/runs/", run_views.queue_run, name="graph-runs"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", run_views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/docs.js", docs_script, name="api-docs-script"),
    path("api/v1/", api.urls),
]

# Unhandled exceptions: a database that is briefly unavailable answers 503, anything else 500;
# the JSON envelope under /api/, a page elsewhere. A body over the limit answers 413 under /api/.
handler400 = "geon.api.bad_request"
handler500 = "geon.api.server_error"
