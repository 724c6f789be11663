// The fixture of the OAuth client's flow tests (client_oauth_flow_test, client_oauth_dpop_test):
// the auth tests' loopback authorization server fixture, with what the client's tests add.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/task.hpp"
#include "auth_test_support.hpp"
#include "drive_on_loop.hpp"
#include "http_test_servers.hpp"

namespace toolport::test_support {

// A request target without its query: the path an authorization server dispatches on.
inline std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

// The auth tests' LoopbackAuthServerTest (auth_test_support.hpp) seen from the client: its
// scripted server is `as`, whose `std::string base` is set to http://127.0.0.1:PORT before
// a request can come (its protected resource is base + "/mcp"); plus a fresh directory for
// the token store, drive() of a Task<void>, and requests matched on their path.
template <typename AuthServer>
class LoopbackAuthorizationServerTest : public LoopbackAuthServerTest<AuthServer> {
protected:
    using Base = LoopbackAuthServerTest<AuthServer>;

    LoopbackAuthorizationServerTest() {
        as.base = "http://127.0.0.1:" + std::to_string(this->server.port());
        char pattern[] = "/tmp/toolport-oauth-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir = pattern;
    }
    ~LoopbackAuthorizationServerTest() override { std::filesystem::remove_all(dir); }

    using Base::drive;
    void drive(Task<void> task) {
        auto wrapped = [](Task<void> t) -> Task<bool> {
            co_await std::move(t);
            co_return true;
        };
        drive_on(this->io, wrapped(std::move(task)));
    }

    // The requests the server saw for `path` (their target without its query), in order.
    // (Hides the base's, which matches whole targets: the client's requests carry queries.)
    std::vector<SeenRequest> requests_to(const std::string& path) const {
        std::vector<SeenRequest> out;
        for (const auto& r : this->server.requests()) {
            if (path_of(r.target) == path) out.push_back(r);
        }
        return out;
    }

    // A 401's WWW-Authenticate: a `scheme` challenge naming the resource's metadata, then `extra`.
    std::string challenge_of(std::string_view scheme, const std::string& extra = "") const {
        return std::string(scheme) + " resource_metadata=\"" + as.base + "/.well-known/oauth-protected-resource/mcp\"" +
               extra;
    }

    AuthServer& as = this->state;
    std::string dir;  // the token store goes in it
    using Base::executor;
    using Base::io;
    using Base::server;
};

}  // namespace toolport::test_support
