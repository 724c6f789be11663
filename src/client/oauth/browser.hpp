// Showing the user the authorization page: the command in $BROWSER when it is set (split
// into words like a shell would, never run by one, the URL appended as one more argument),
// else xdg-open (or open on macOS) when there is a display; the URL is always printed to
// stderr as well, so a user on a remote shell can open it elsewhere.
#pragma once

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

// Starts `argv` without waiting for it (stdin from /dev/null, stdout onto our stderr).
// Returns an error sentence, empty on success. The process is reaped when it exits.
std::string start_browser(const std::vector<std::string>& argv);

}  // namespace toolport::client::oauth
