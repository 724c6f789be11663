// One HTTP request as the server's parser leaves it (http_server.cpp), and the view the
// endpoint reads it through. Its fields are kept in one string, names and values back to
// back, in the order they came: Beast's own message type gave each field a heap node in a
// tree (about 3,000 instructions per request to build, search for keep-alive and free).
// A connection keeps one ParsedRequest and clears it between requests, so its buffers are
// allocated once per connection, not per request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transports/http_exchange.hpp"

namespace toolport {

class ParsedRequest {
public:
    static constexpr std::size_t kMaxFieldBytes = std::size_t{1} << 30;
    explicit ParsedRequest(std::size_t max_field_bytes = kMaxFieldBytes) : max_field_bytes_(max_field_bytes) {}

    HttpMethod method = HttpMethod::other;
    std::string target;
    unsigned version = 11;  // 10 for HTTP/1.0, 11 for HTTP/1.1
    bool keep_alive = false;
    std::string body;

    // Ready for the next request on the connection; keeps the buffers unless the last
    // request made them large (a connection that once took a 4 MB body should not hold it).
    void clear();
    // False (nothing added) past max_field_bytes of names and values (the spans are
    // 32-bit). The header limit keeps a header far below; a chunked body's trailers are
    // not under it.
    bool add_field(std::string_view name, std::string_view value);
    std::size_t field_count() const { return spans_.size(); }
    std::pair<std::string_view, std::string_view> field(std::size_t i) const;
    // The first field of that name (compared ignoring ASCII case), as it came.
    std::optional<std::string_view> find(std::string_view name) const;

private:
    struct Span {
        std::uint32_t name_at, name_size, value_at, value_size;
    };
    std::string text_;  // every name and value, back to back
    std::vector<Span> spans_;
    std::size_t max_field_bytes_;
};

// ParsedRequest as the endpoint reads it (no copies).
class ParsedRequestView final : public HttpRequestView {
public:
    explicit ParsedRequestView(const ParsedRequest& request) : r_(request) {}
    HttpMethod method() const override { return r_.method; }
    std::string_view target() const override { return r_.target; }
    unsigned version() const override { return r_.version; }
    bool keep_alive() const override { return r_.keep_alive; }
    std::string_view header(std::string_view name) const override { return r_.find(name).value_or(std::string_view()); }
    bool has_header(std::string_view name) const override { return r_.find(name).has_value(); }
    void for_each_header(const std::function<void(std::string_view, std::string_view)>& visit) const override;
    const std::string& body() const override { return r_.body; }

private:
    const ParsedRequest& r_;
};

}  // namespace toolport
