// The fixture of the OAuth client's flow tests (client_oauth_flow_test, client_oauth_dpop_test):
// a loopback authorization server (a ScriptedServer whose every answer comes from the
// test's `AuthServer`), a fresh directory for the token store, and the loop the authorizer
// runs on.
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

#include "async/task.hpp"
#include "drive_on_loop.hpp"
#include "http_test_servers.hpp"
#include "transports/asio_executor.hpp"

namespace toolport::test_support {

// A request target without its query: the path an authorization server dispatches on.
inline std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

// `AuthServer` has a `std::string base` (set here to http://127.0.0.1:PORT before any
// request can come) and `ScriptedReply answer(const SeenRequest&)`, called on the
// server's thread; its protected resource is base + "/mcp".
template <typename AuthServer>
class LoopbackAuthorizationServerTest : public ::testing::Test {
protected:
    LoopbackAuthorizationServerTest() : server([this](const SeenRequest& r) { return as.answer(r); }) {
        as.base = "http://127.0.0.1:" + std::to_string(server.port());
        char pattern[] = "/tmp/toolport-oauth-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir = pattern;
    }
    ~LoopbackAuthorizationServerTest() override { std::filesystem::remove_all(dir); }

    template <typename T>
    T drive(Task<T> task) {
        return drive_on(io, std::move(task));
    }
    void drive(Task<void> task) {
        auto wrapped = [](Task<void> t) -> Task<bool> {
            co_await std::move(t);
            co_return true;
        };
        drive_on(io, wrapped(std::move(task)));
    }

    // The requests the server saw for `path` (their target without its query), in order.
    std::vector<SeenRequest> requests_to(const std::string& path) const {
        std::vector<SeenRequest> out;
        for (const auto& r : server.requests()) {
            if (path_of(r.target) == path) out.push_back(r);
        }
        return out;
    }

    // A 401's WWW-Authenticate: a `scheme` challenge naming the resource's metadata, then `extra`.
    std::string challenge_of(std::string_view scheme, const std::string& extra = "") const {
        return std::string(scheme) + " resource_metadata=\"" + as.base + "/.well-known/oauth-protected-resource/mcp\"" +
               extra;
    }

    AuthServer as;
    ScriptedServer server;
    std::string dir;  // the token store goes in it
    boost::asio::io_context io;
    AsioExecutor executor{io};
};

}  // namespace toolport::test_support
