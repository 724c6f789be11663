#include "console/console_reply.hpp"

#include "transports/event_stream.hpp"
#include "transports/http_endpoint.hpp"
#include "transports/sse_stream.hpp"
#include "util/json.hpp"

namespace toolport::console {

namespace {

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace

std::string error_body(std::string_view code, std::string_view message, std::string_view suggestion) {
    Json body{{"error", {{"code", code}, {"message", message}, {"suggestion", suggestion}}}};
    return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

HttpAnswer reply_answer(const HttpRequestView& req, unsigned status, std::string_view cache_control,
                        const std::vector<HttpHeader>& extra, std::string body) {
    std::vector<HttpHeader> headers{{"Content-Security-Policy", kContentSecurityPolicy},
                                    {"X-Content-Type-Options", "nosniff"},
                                    {"Referrer-Policy", "no-referrer"},
                                    {"Cache-Control", cache_control}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    HttpEndpoint::count_request(req.method(), status);
    HttpAnswer answer;
    answer.reply = format_reply(req.version(), req.keep_alive(), status, headers, std::move(body));
    return answer;
}

HttpAnswer json_answer(const HttpRequestView& req, unsigned status, std::string body,
                       const std::vector<HttpHeader>& extra) {
    std::vector<HttpHeader> headers{{"Content-Type", "application/json"}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return reply_answer(req, status, "no-store", headers, std::move(body));
}

HttpAnswer error_answer(const HttpRequestView& req, unsigned status, std::string_view code, std::string_view message,
                        std::string_view suggestion, const std::vector<HttpHeader>& extra) {
    return json_answer(req, status, error_body(code, message, suggestion), extra);
}

HttpAnswer empty_answer(const HttpRequestView& req, unsigned status) {
    return reply_answer(req, status, "no-store", {}, {});
}

HttpAnswer html_answer(const HttpRequestView& req, unsigned status, std::string_view title, std::string_view text,
                       const std::vector<HttpHeader>& extra) {
    // No script, no style: the policy above allows neither inline.
    std::string body = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                       " - Toolport console</title></head>\n<body><h1>" + html_escape(title) + "</h1>\n<p>" +
                       html_escape(text) + "</p></body></html>\n";
    std::vector<HttpHeader> headers{{"Content-Type", "text/html; charset=utf-8"}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return reply_answer(req, status, "no-store", headers, std::move(body));
}

std::shared_ptr<OutStream> make_stream(std::size_t max_events, std::size_t max_bytes) {
    return std::make_shared<OutStream>(0, max_events, max_bytes);
}

HttpAnswer stream_answer(const HttpRequestView& req, std::shared_ptr<OutStream> out, std::function<void()> on_end) {
    EventStreamSettings settings;
    settings.preformatted = true;
    settings.headers = {{"Content-Security-Policy", std::string(kContentSecurityPolicy)},
                        {"X-Content-Type-Options", "nosniff"},
                        {"Referrer-Policy", "no-referrer"}};
    settings.cache_control = "no-store";
    HttpEndpoint::count_request(req.method(), 200);
    HttpAnswer answer;
    answer.stream = std::make_shared<EventStream>(std::move(out), req.version(), std::move(settings), std::move(on_end));
    return answer;
}

std::string sse_event(std::string_view name, std::string_view json) {
    std::string event;
    event.reserve(name.size() + json.size() + 16);
    event += "event: ";
    event += name;
    event += "\ndata: ";
    event += json;
    event += "\n\n";
    return event;
}

}  // namespace toolport::console
