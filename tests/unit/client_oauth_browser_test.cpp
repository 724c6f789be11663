// start_browser: a browser command that fails at once is reported (the CLI's login stops
// waiting for a redirect that will not come); one that succeeds, or is still running when
// the watch ends, is not.
#include <gtest/gtest.h>

#include <chrono>

#include "client/oauth/browser.hpp"

namespace toolport::client::oauth {
namespace {

using namespace std::chrono_literals;

TEST(ClientOAuthBrowser, ACommandThatFailsAtOnceIsReported) {
    const auto start = std::chrono::steady_clock::now();
    auto error = start_browser({"sh", "-c", "exit 22"}, 5s);
    EXPECT_EQ(error, "sh exited with status 22");
    // Reported when it exits, not at the end of the watch.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    EXPECT_EQ(start_browser({"sh", "-c", "kill -9 $$"}, 5s), "sh was killed by signal 9");
    EXPECT_NE(start_browser({"/nonexistent/browser"}, 5s), "");
}

TEST(ClientOAuthBrowser, ACommandThatSucceedsOrKeepsRunningIsNot) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(start_browser({"true"}, 5s), "");
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);  // returns as soon as it exited
    // Still running when the watch ends: left to run (and reaped), its later failure unseen.
    EXPECT_EQ(start_browser({"sh", "-c", "sleep 1; exit 1"}, 100ms), "");
}

}  // namespace
}  // namespace toolport::client::oauth
