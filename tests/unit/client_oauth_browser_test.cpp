// BrowserProcess: a browser command that fails at once is reported (the CLI's login stops
// waiting for a redirect that will not come); one that succeeds is not; asking never blocks.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "client/oauth/browser.hpp"

namespace toolport::client::oauth {
namespace {

using namespace std::chrono_literals;

// What `browser` ended with, asking every 10 ms for up to 5 s.
std::optional<std::string> end_of(BrowserProcess& browser) {
    for (int i = 0; i < 500; ++i) {
        if (auto ended = browser.ended()) return ended;
        std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
}

TEST(ClientOAuthBrowser, ACommandThatFailsIsReported) {
    BrowserProcess exits({"sh", "-c", "exit 22"});
    EXPECT_EQ(end_of(exits), "sh exited with status 22");
    EXPECT_EQ(exits.ended(), "sh exited with status 22");  // asked again: the same answer
    BrowserProcess killed({"sh", "-c", "kill -9 $$"});
    EXPECT_EQ(end_of(killed), "sh was killed by signal 9");
    EXPECT_THROW(BrowserProcess({"/nonexistent/browser"}), std::runtime_error);
}

TEST(ClientOAuthBrowser, ACommandThatSucceedsIsNotAndOneStillRunningIsNotWaitedFor) {
    BrowserProcess ok({"true"});
    EXPECT_EQ(end_of(ok), "");
    const auto start = std::chrono::steady_clock::now();
    {
        BrowserProcess running({"sh", "-c", "sleep 1; exit 1"});
        EXPECT_EQ(running.ended(), std::nullopt);
    }  // left to run, reaped by a thread of its own
    EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

}  // namespace
}  // namespace toolport::client::oauth
