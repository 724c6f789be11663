// What passes between an HTTP connection (sockets and parsing, Boost.Beast:
// http_server.cpp) and the MCP endpoint that decides the answers (http_endpoint.cpp): a
// request as the endpoint reads it, and the answer it gives back. No Asio, no Beast: the
// endpoint's decisions are unit-tested without a socket.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport {

enum class HttpMethod { get, post, delete_, head, put, options, patch, other };

// The method as a metric label ("other" for anything unusual: it is client input, and each
// label value is a series kept for ever).
std::string_view method_label(HttpMethod method);

// One parsed request, as the connection holds it.
class HttpRequestView {
public:
    virtual ~HttpRequestView() = default;
    virtual HttpMethod method() const = 0;
    virtual std::string_view target() const = 0;
    virtual unsigned version() const = 0;  // 10 for HTTP/1.0, 11 for HTTP/1.1
    virtual bool keep_alive() const = 0;
    // A header's value ("" when absent); names compare case-insensitively.
    virtual std::string_view header(std::string_view name) const = 0;
    virtual bool has_header(std::string_view name) const = 0;
    virtual void for_each_header(
        const std::function<void(std::string_view name, std::string_view value)>& visit) const = 0;
    virtual const std::string& body() const = 0;
};

// A complete reply, serialized: the status line and header fields, then the body.
struct HttpReply {
    unsigned status = 200;
    std::string head;  // ends with the empty line
    std::string body;
    bool keep_alive = false;  // the connection may carry another request after it
};

struct HttpHeader {
    std::string_view name;
    std::string_view value;
};

// Formats a reply with Content-Length and the Connection field HTTP/1.0 and 1.1 need.
HttpReply format_reply(unsigned version, bool keep_alive, unsigned status, std::initializer_list<HttpHeader> headers,
                       std::string body);
// The same with header fields decided at run time.
HttpReply format_reply(unsigned version, bool keep_alive, unsigned status, const std::vector<HttpHeader>& headers,
                       std::string body);
std::string_view reason_phrase(unsigned status);

class EventStream;
class PendingAnswer;

// The endpoint's answer to a request: exactly one of a reply to write, an event stream that
// takes the connection over, or an answer not decided yet. None of them: close the
// connection without a reply (the client is gone, or the server is stopping).
struct HttpAnswer {
    std::optional<HttpReply> reply;
    std::shared_ptr<EventStream> stream;
    std::shared_ptr<PendingAnswer> pending;
};

// An answer that waits for the requests of a POST. Lives on the engine's loop; every
// member is called there.
class PendingAnswer {
public:
    virtual ~PendingAnswer() = default;
    // take() may be called: the answer is decided (or the client left, or the server stops).
    virtual bool ready() const = 0;
    // Called on the engine's loop whenever ready() may have turned true.
    virtual void set_waker(std::function<void()> waker) = 0;
    virtual HttpAnswer take() = 0;
    // The client closed the connection before the answer: in the stateless revision that
    // cancels its requests; otherwise their replies stay in the stream's log for a resume.
    virtual void client_gone() = 0;
};

}  // namespace toolport
