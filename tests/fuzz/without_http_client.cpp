// The fuzz build's core leaves out the downstream HTTP client's network code
// (src/http_client/http_client.cpp: Beast, TLS and the connection pool, the heaviest file to
// compile with coverage and sanitizers). src/auth needs the class all the same: the key source,
// the introspector and the token endpoint client hold one and call fetch(). Here an
// HttpClient can be made but never connects: every request fails with a connect error, as
// against an unreachable server. No fuzzer sends requests; fuzz_auth makes one only to
// build a TokenIntrospector whose response reader it drives.
#include <memory>
#include <optional>
#include <string>

#include "http_client/http_client.hpp"
#include "util/http_text.hpp"

namespace toolport::http_client {

namespace {

HttpError no_network() { return HttpError(HttpError::Kind::connect, "the fuzz build has no HTTP client network code"); }

}  // namespace

std::optional<std::string> Response::header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
        if (util::iequals_ascii(n, name)) return v;
    }
    return std::nullopt;
}

struct HttpClient::Impl {};
struct ResponseStream::State {};

HttpClient::HttpClient(AsioExecutor&, ClientOptions) : impl_(std::make_shared<Impl>()) {}
HttpClient::~HttpClient() = default;

Task<Response> HttpClient::fetch(Request, CallOptions) {
    throw no_network();
    co_return Response{};
}

Task<std::unique_ptr<ResponseStream>> HttpClient::open(Request, StreamOptions) {
    throw no_network();
    co_return nullptr;
}

Stats HttpClient::stats() const { return {}; }
void HttpClient::close_idle() {}

ResponseStream::ResponseStream(std::shared_ptr<State> state) : state_(std::move(state)) {}
ResponseStream::~ResponseStream() = default;

const Response& ResponseStream::head() const {
    static const Response none{};
    return none;
}

std::optional<std::uint64_t> ResponseStream::content_length() const { return std::nullopt; }

Task<std::optional<std::string>> ResponseStream::read_some() {
    throw no_network();
    co_return std::nullopt;
}

Task<std::string> ResponseStream::read_all(std::size_t) {
    throw no_network();
    co_return std::string();
}

}  // namespace toolport::http_client
