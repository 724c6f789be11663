// Showing the user the authorization page: the command in $BROWSER when it is set (split
// into words like a shell would, never run by one, the URL appended as one more argument),
// else xdg-open (or open on macOS) when there is a display; the URL is always printed to
// stderr as well, so a user on a remote shell can open it elsewhere.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace toolport::client::oauth {

// The argument vector that opens `url`, or an empty one when nothing can (no $BROWSER, no
// display). `env` is looked up for BROWSER, DISPLAY and WAYLAND_DISPLAY. Throws
// std::invalid_argument when $BROWSER cannot be split into words.
std::vector<std::string> browser_command(const std::string& url, const std::function<const char*(const char*)>& env);

// A started browser command, watched without blocking the event loop: a command that
// fails at once (exits non-zero or is killed: a broken $BROWSER, no browser on the
// machine) can be reported instead of leaving the user waiting for a redirect that will
// never come.
class BrowserProcess {
public:
    // Starts `argv` (stdin from /dev/null, stdout onto our stderr). Throws
    // std::runtime_error when it cannot be started.
    explicit BrowserProcess(const std::vector<std::string>& argv);
    // One still running is left to run (a browser in the foreground) and reaped by a thread
    // of its own when it exits.
    ~BrowserProcess();
    BrowserProcess(const BrowserProcess&) = delete;
    BrowserProcess& operator=(const BrowserProcess&) = delete;

    // Never blocks: nullopt while it runs; once it has ended, "" when it exited with status
    // 0, else what went wrong ("xdg-open exited with status 3").
    std::optional<std::string> ended();

private:
    int pid_ = -1;
    std::string name_;
    std::optional<std::string> ended_;
};

}  // namespace toolport::client::oauth
