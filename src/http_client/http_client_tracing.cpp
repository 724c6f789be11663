// HttpClient::fetch as a CLIENT span (OpenTelemetry HTTP conventions: named by the method,
// with http.request.method, server.address, server.port, url.full without its query,
// http.response.status_code, error.type), and the W3C trace context headers on the request.
#include <algorithm>
#include <strings.h>

#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "observability/trace_context.hpp"
#include "observability/tracer.hpp"

namespace toolport::http_client {
namespace {

void set_header(Headers& headers, std::string_view name, std::string value) {
    std::erase_if(headers, [&](const auto& h) {
        return h.first.size() == name.size() && strncasecmp(h.first.data(), name.data(), name.size()) == 0;
    });
    headers.emplace_back(std::string(name), std::move(value));
}

void add_trace_headers(Headers& headers, const observability::TraceContext& context, const std::string& baggage) {
    if (!context.valid()) return;
    set_header(headers, "traceparent", observability::format_traceparent(context));
    if (!context.trace_state.empty()) set_header(headers, "tracestate", context.trace_state);
    if (!baggage.empty()) set_header(headers, "baggage", baggage);
}

std::string_view error_type(HttpError::Kind kind) {
    switch (kind) {
        case HttpError::Kind::invalid_request: return "invalid_request";
        case HttpError::Kind::dns: return "dns";
        case HttpError::Kind::connect: return "connect";
        case HttpError::Kind::tls: return "tls";
        case HttpError::Kind::timeout: return "timeout";
        case HttpError::Kind::connection_reset: return "connection_reset";
        case HttpError::Kind::protocol: return "protocol";
        case HttpError::Kind::redirect_refused: return "redirect_refused";
        case HttpError::Kind::proxy: return "proxy";
    }
    return "_OTHER";
}

void describe_request(observability::Span& span, const Request& request) {
    span.set_attribute("http.request.method", request.method);
    try {
        const Url url = parse_url(request.url);
        span.set_attribute("server.address", url.host);
        span.set_attribute("server.port", static_cast<std::int64_t>(url.port));
        // Without the query, which often holds keys (as HttpError messages leave it out).
        std::string full = request.url.substr(0, request.url.find_first_of("?#"));
        span.set_attribute("url.full", std::move(full));
    } catch (const std::exception&) {
        // fetch() itself reports the bad URL.
    }
}

}  // namespace

// Plain functions, not coroutines: an untraced call costs no frame of its own.
Task<Response> HttpClient::fetch(Request request, CallOptions options) {
    if (!options.traced) return fetch_untraced(std::move(request), std::move(options));
    if (observability::tracer().enabled()) return fetch_traced(std::move(request), std::move(options));
    if (options.trace_parent) add_trace_headers(request.headers, *options.trace_parent, options.baggage);
    return fetch_untraced(std::move(request), std::move(options));
}

Task<std::unique_ptr<ResponseStream>> HttpClient::open(Request request, StreamOptions options) {
    if (options.trace_parent) {
        if (observability::tracer().enabled()) return open_traced(std::move(request), std::move(options));
        add_trace_headers(request.headers, *options.trace_parent, options.baggage);
    }
    return open_untraced(std::move(request), std::move(options));
}

namespace {

// The span of one request, started with its trace headers set on `request`.
observability::Span start_client_span(Request& request, const observability::TraceContext* parent,
                                      const std::string& baggage) {
    auto span = observability::tracer().start_span(request.method, observability::SpanKind::client, parent);
    add_trace_headers(request.headers, span.context(), baggage);
    if (span.recording()) describe_request(span, request);
    return span;
}

void record_status(observability::Span& span, unsigned status) {
    if (!span.recording()) return;
    span.set_attribute("http.response.status_code", static_cast<std::int64_t>(status));
    if (status >= 400) span.set_error(std::to_string(status));
}

// The failure in flight (inside a catch): its kind on the span.
void record_failure(observability::Span& span) {
    try {
        throw;
    } catch (const HttpError& e) {
        span.set_error(error_type(e.kind), e.what());
    } catch (const std::exception& e) {
        span.set_error("_OTHER", e.what());
    } catch (...) {
        span.set_error("_OTHER", "the request failed");
    }
}

}  // namespace

Task<Response> HttpClient::fetch_traced(Request request, CallOptions options) {
    auto span = start_client_span(request, options.trace_parent, options.baggage);
    try {
        Response response = co_await fetch_untraced(std::move(request), std::move(options));
        record_status(span, response.status);
        if (response.attempts > 1) {
            span.set_attribute("http.request.resend_count", static_cast<std::int64_t>(response.attempts - 1));
        }
        co_return response;
    } catch (...) {
        record_failure(span);
        throw;
    }
}

Task<std::unique_ptr<ResponseStream>> HttpClient::open_traced(Request request, StreamOptions options) {
    auto span = start_client_span(request, options.trace_parent, options.baggage);
    try {
        auto stream = co_await open_untraced(std::move(request), std::move(options));
        record_status(span, stream->head().status);
        co_return stream;
    } catch (...) {
        record_failure(span);
        throw;
    }
}

}  // namespace toolport::http_client
