// /docs: Swagger UI over the app's own OpenAPI document (the bundle is a classic script that
// defines window.SwaggerUIBundle; this module runs after it).
window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });
