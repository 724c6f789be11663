// How the console answers: JSON (the API), its errors, small HTML pages (refusals), and
// event streams (the API's live views), each with the header fields every console answer
// carries (a strict Content-Security-Policy, nosniff, no referrer, no caching of the API).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transports/http_exchange.hpp"

namespace toolport {
class OutStream;
}

namespace toolport::console {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// A console error's body: {"error":{"code","message","suggestion"}}.
std::string error_body(std::string_view code, std::string_view message, std::string_view suggestion);

// A JSON answer (Cache-Control: no-store), with more header fields when given.
HttpAnswer json_answer(const HttpRequestView& req, unsigned status, std::string body,
                       const std::vector<HttpHeader>& extra = {});
HttpAnswer error_answer(const HttpRequestView& req, unsigned status, std::string_view code, std::string_view message,
                        std::string_view suggestion, const std::vector<HttpHeader>& extra = {});
// An empty answer (204, 202 without a body).
HttpAnswer empty_answer(const HttpRequestView& req, unsigned status);
// A small HTML page saying `title` and `text` (escaped here).
HttpAnswer html_answer(const HttpRequestView& req, unsigned status, std::string_view title, std::string_view text,
                       const std::vector<HttpHeader>& extra = {});
// A complete answer with the console's header fields and `extra` (the static files).
HttpAnswer reply_answer(const HttpRequestView& req, unsigned status, std::string_view cache_control,
                        const std::vector<HttpHeader>& extra, std::string body);

// An event stream over `out`, whose events are already in SSE form (sse_event); `on_end`
// runs once when the connection lets it go (the client left, or the stream ended).
HttpAnswer stream_answer(const HttpRequestView& req, std::shared_ptr<OutStream> out, std::function<void()> on_end);
// A stream's log: at most this many events and bytes kept for a client that reads slowly
// (the oldest go first).
std::shared_ptr<OutStream> make_stream(std::size_t max_events = 256, std::size_t max_bytes = 4 << 20);
// "event: NAME\ndata: JSON\n\n" (JSON is one line: serialized without newlines).
std::string sse_event(std::string_view name, std::string_view json);

}  // namespace toolport::console
