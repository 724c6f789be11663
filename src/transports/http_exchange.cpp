#include "transports/http_exchange.hpp"

namespace toolport {

std::string_view method_label(HttpMethod method) {
    switch (method) {
        case HttpMethod::get: return "GET";
        case HttpMethod::post: return "POST";
        case HttpMethod::delete_: return "DELETE";
        case HttpMethod::head: return "HEAD";
        case HttpMethod::put: return "PUT";
        case HttpMethod::options: return "OPTIONS";
        case HttpMethod::patch: return "PATCH";
        default: return "other";
    }
}

std::string_view reason_phrase(unsigned status) {
    switch (status) {
        case 200: return "OK";
        case 202: return "Accepted";
        case 204: return "No Content";
        case 304: return "Not Modified";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 406: return "Not Acceptable";
        case 409: return "Conflict";
        case 413: return "Payload Too Large";
        case 415: return "Unsupported Media Type";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

namespace {

HttpReply format_with(unsigned version, bool keep_alive, unsigned status, const HttpHeader* first,
                      const HttpHeader* last, std::string body) {
    HttpReply reply;
    reply.status = status;
    reply.keep_alive = keep_alive;
    std::string& head = reply.head;
    head.reserve(160);
    head += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    head += std::to_string(status);
    head += ' ';
    head += reason_phrase(status);
    head += "\r\n";
    for (const auto* h = first; h != last; ++h) {
        head += h->name;
        head += ": ";
        head += h->value;
        head += "\r\n";
    }
    // Only where the version's default differs from what is wanted.
    if (version == 10 && keep_alive) head += "Connection: keep-alive\r\n";
    if (version != 10 && !keep_alive) head += "Connection: close\r\n";
    head += "Content-Length: ";
    head += std::to_string(body.size());
    head += "\r\n\r\n";
    reply.body = std::move(body);
    return reply;
}

}  // namespace

HttpReply format_reply(unsigned version, bool keep_alive, unsigned status, std::initializer_list<HttpHeader> headers,
                       std::string body) {
    return format_with(version, keep_alive, status, headers.begin(), headers.end(), std::move(body));
}

HttpReply format_reply(unsigned version, bool keep_alive, unsigned status, const std::vector<HttpHeader>& headers,
                       std::string body) {
    return format_with(version, keep_alive, status, headers.data(), headers.data() + headers.size(), std::move(body));
}

}  // namespace toolport
