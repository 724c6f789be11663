// The loopback redirect of the authorization-code flow for a native client (RFC 8252
// §7.3): an HTTP listener on 127.0.0.1 at a port the kernel picks, whose /callback the
// authorization server sends the user's browser back to with the code. It answers the
// browser with a short page and hands the response's parameters to the waiting flow.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "async/task.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::client::oauth {

// The parameters of the redirect (RFC 6749 §4.1.2, RFC 9207's iss).
struct AuthorizationResponse {
    std::string code, state;
    std::string error, error_description;  // the authorization server refused
    std::optional<std::string> iss;
};

// Parses the query of a redirect ("code=...&state=..."; form encoding, '+' is a space).
// nullopt when it is not well-formed percent-encoding.
std::optional<AuthorizationResponse> parse_authorization_response(std::string_view query);

class RedirectListener {
public:
    // Listens on 127.0.0.1. Throws AuthorizationError when it cannot.
    explicit RedirectListener(AsioExecutor& executor);
    ~RedirectListener();
    RedirectListener(const RedirectListener&) = delete;
    RedirectListener& operator=(const RedirectListener&) = delete;

    // http://127.0.0.1:PORT/callback
    std::string redirect_uri() const;

    // The first request to /callback, once it has come. One whose state is not `state` is
    // answered 400 and ends the wait with AuthorizationError (it did not come from the
    // authorization request this flow made: RFC 6749 §10.12). Requests to other paths are
    // answered 404 and ignored. Throws AuthorizationError after `timeout`.
    Task<AuthorizationResponse> wait(std::string state, std::chrono::milliseconds timeout);

    // Ends a wait in progress with AuthorizationError(`reason`): the response will not come
    // (the browser command failed). Nothing happens when no wait is in progress.
    void abandon(std::string reason);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toolport::client::oauth
