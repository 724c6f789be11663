// Showing the user the authorization page: the command in $BROWSER when it is set (split
// into words like a shell would, never run by one, the URL appended as one more argument),
// else xdg-open (or open on macOS) when there is a display; the URL is always printed to
// stderr as well, so a user on a remote shell can open it elsewhere.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace toolport::client::oauth {

// The argument vector that opens `url`, or an empty one when nothing can (no $BROWSER, no
// display). `env` is looked up for BROWSER, DISPLAY and WAYLAND_DISPLAY. Throws
// std::invalid_argument when $BROWSER cannot be split into words.
std::vector<std::string> browser_command(const std::string& url,
                                         const std::function<const char*(const char*)>& env);

// Starts `argv` (stdin from /dev/null, stdout onto our stderr) and watches it for up to
// `watch`: a command that fails at once (exits non-zero or is killed: a broken $BROWSER, no
// browser on the machine) is reported instead of leaving the user waiting for a redirect
// that will never come; one that succeeds returns as soon as it exits. One still running
// after `watch` (a browser in the foreground) is left to run and reaped when it exits.
// Returns an error sentence, empty on success.
std::string start_browser(const std::vector<std::string>& argv,
                          std::chrono::milliseconds watch = std::chrono::milliseconds(2000));

}  // namespace toolport::client::oauth
