// Starts Swagger UI on /api/v1/docs (templates/api/docs.html). A file, not an inline script, so
// the page keeps the site's Content-Security-Policy. Writes send the page's CSRF token.
(() => {
  const page = document.body.dataset;
  SwaggerUIBundle({
    url: page.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    requestInterceptor: (request) => {
      request.headers["X-CSRFToken"] = page.csrfToken;
      return request;
    },
  });
})();
