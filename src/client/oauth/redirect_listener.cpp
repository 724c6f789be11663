#include "client/oauth/redirect_listener.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>

#include "async/asio_executor.hpp"
#include "async/completion.hpp"
#include "client/http_authorizer.hpp"
#include "util/percent.hpp"

namespace toolport::client::oauth {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRequestBytes = 64 * 1024;

std::optional<std::string> form_decode(std::string_view text) {
    std::string plus(text);
    for (char& c : plus) {
        if (c == '+') c = ' ';
    }
    return util::percent_decode(plus);
}

constexpr const char* kPage =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>Toolport</title></head><body>"
    "<p>{}</p></body></html>\n";

}  // namespace

std::optional<AuthorizationResponse> parse_authorization_response(std::string_view query) {
    AuthorizationResponse response;
    std::size_t pos = 0;
    while (pos <= query.size() && !query.empty()) {
        std::size_t end = query.find('&', pos);
        if (end == std::string_view::npos) end = query.size();
        std::string_view pair = query.substr(pos, end - pos);
        if (!pair.empty()) {
            std::size_t eq = pair.find('=');
            auto name = form_decode(pair.substr(0, eq));
            auto value = form_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
            if (!name || !value) return std::nullopt;
            if (*name == "code") response.code = *value;
            else if (*name == "state") response.state = *value;
            else if (*name == "error") response.error = *value;
            else if (*name == "error_description") response.error_description = *value;
            else if (*name == "iss") response.iss = *value;
        }
        if (end == query.size()) break;
        pos = end + 1;
    }
    return response;
}

struct RedirectListener::Impl : std::enable_shared_from_this<Impl> {
    explicit Impl(AsioExecutor& executor) : executor(executor), acceptor(executor.io()) {}

    AsioExecutor& executor;
    tcp::acceptor acceptor;
    unsigned short port = 0;
    std::string expected_state;
    bool waiting = false;
    std::optional<Completion<AuthorizationResponse>> result;

    void accept() {
        auto self = shared_from_this();
        acceptor.async_accept([self](boost::system::error_code ec, tcp::socket socket) {
            if (ec) return;  // closed
            self->serve(std::make_shared<tcp::socket>(std::move(socket)));
            self->accept();
        });
    }

    void serve(std::shared_ptr<tcp::socket> socket) {
        struct Read {
            boost::beast::flat_buffer buffer;
            http::request_parser<http::string_body> parser;
        };
        auto read = std::make_shared<Read>();
        read->parser.body_limit(kMaxRequestBytes);
        read->parser.header_limit(kMaxRequestBytes);
        auto self = shared_from_this();
        http::async_read(
            *socket, read->buffer, read->parser, [self, socket, read](boost::system::error_code ec, std::size_t) {
                if (ec) return;
                const auto& request = read->parser.get();
                std::string target(request.target());
                std::string path = target.substr(0, target.find('?'));
                std::string query = target.find('?') == std::string::npos ? "" : target.substr(target.find('?') + 1);
                unsigned status = 200;
                std::string text;
                if (path != "/callback" || request.method() != http::verb::get) {
                    status = 404;
                    text = "Not found.";
                } else {
                    text = self->take(query, status);
                }
                auto response = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status),
                                                                                    11);
                response->set(http::field::content_type, "text/html; charset=utf-8");
                response->set(http::field::cache_control, "no-store");
                response->set(http::field::connection, "close");
                response->body() = fmt::format(kPage, text);
                response->prepare_payload();
                http::async_write(*socket, *response, [socket, response](boost::system::error_code, std::size_t) {
                    boost::system::error_code ignored;
                    socket->shutdown(tcp::socket::shutdown_both, ignored);
                });
            });
    }

    // Hands the redirect's parameters to the flow; returns the page's sentence.
    std::string take(const std::string& query, unsigned& status) {
        if (!waiting || !result || result->done()) {
            status = 409;
            return "This sign-in is not expected any more; go back to the terminal.";
        }
        auto response = parse_authorization_response(query);
        if (!response) {
            status = 400;
            result->set_error(std::make_exception_ptr(
                AuthorizationError("the authorization response's parameters are not well-formed")));
            return "The authorization response was malformed.";
        }
        if (response->state != expected_state) {
            status = 400;
            result->set_error(std::make_exception_ptr(AuthorizationError(
                "the authorization response's state does not match the request's: refusing it (it may be forged)")));
            return "The authorization response does not belong to this sign-in.";
        }
        bool refused = !response->error.empty();
        // Resumes the flow after this answer is queued; post, so it does not run inside the read handler.
        auto completion = *result;
        executor.post([completion, value = std::move(*response)]() mutable { completion.set_value(std::move(value)); });
        return refused ? "The sign-in was refused; see the terminal."
                       : "Signed in. You can close this window and go back to the terminal.";
    }
};

RedirectListener::RedirectListener(AsioExecutor& executor) : impl_(std::make_shared<Impl>(executor)) {
    boost::system::error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    impl_->acceptor.open(endpoint.protocol(), ec);
    if (!ec) impl_->acceptor.bind(endpoint, ec);
    if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
        throw AuthorizationError(
            fmt::format("cannot listen on 127.0.0.1 for the authorization redirect: {}", ec.message()));
    impl_->port = impl_->acceptor.local_endpoint().port();
    impl_->accept();
}

RedirectListener::~RedirectListener() {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    if (impl_->result && !impl_->result->done())
        impl_->result->set_error(std::make_exception_ptr(OperationCancelled("closed")));
}

std::string RedirectListener::redirect_uri() const { return fmt::format("http://127.0.0.1:{}/callback", impl_->port); }

void RedirectListener::abandon(std::string reason) {
    auto& impl = *impl_;
    if (!impl.waiting || !impl.result || impl.result->done()) return;
    // Posted, as take() does: the waiting flow resumes on its own turn of the loop, not
    // inside the caller's (a timer's) handler.
    auto completion = *impl.result;
    impl.executor.post([completion, reason = std::move(reason)]() mutable {
        if (!completion.done()) completion.set_error(std::make_exception_ptr(AuthorizationError(reason)));
    });
}

Task<AuthorizationResponse> RedirectListener::wait(std::string state, std::chrono::milliseconds timeout) {
    auto impl = impl_;
    impl->expected_state = std::move(state);
    impl->result.emplace();
    impl->waiting = true;
    auto completion = *impl->result;
    auto cancel_timer = impl->executor.schedule_after(timeout, [completion, timeout]() mutable {
        completion.set_error(std::make_exception_ptr(AuthorizationError(
            fmt::format("no authorization response came back within {} s (was the sign-in finished in the browser?)",
                        timeout.count() / 1000))));
    });
    try {
        auto response = co_await completion;
        impl->waiting = false;
        if (cancel_timer) cancel_timer();
        co_return response;
    } catch (...) {
        impl->waiting = false;
        if (cancel_timer) cancel_timer();
        throw;
    }
}

}  // namespace toolport::client::oauth
