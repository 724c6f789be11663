#include "client/oauth/browser.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "client/shell_words.hpp"

extern char** environ;

namespace toolport::client::oauth {

std::vector<std::string> browser_command(const std::string& url, const std::function<const char*(const char*)>& env) {
    std::vector<std::string> argv;
    const char* browser = env("BROWSER");
    if (browser && *browser) {
        argv = split_shell_words(browser);
    } else {
        const char* display = env("DISPLAY");
        const char* wayland = env("WAYLAND_DISPLAY");
#ifdef __APPLE__
        argv = {"open"};
#else
        if ((display && *display) || (wayland && *wayland)) argv = {"xdg-open"};
#endif
    }
    if (argv.empty()) return argv;
    argv.push_back(url);  // one argument, whatever it holds
    return argv;
}

std::string start_browser(const std::vector<std::string>& argv, std::chrono::milliseconds watch) {
    if (argv.empty()) return "no browser command";
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return fmt::format("could not start {}: {}", argv[0], std::strerror(rc));
    // Polled, not waited for: a browser that stays in the foreground must not hold the flow
    // longer than `watch` (the redirect listener answers only once this returns).
    const auto until = std::chrono::steady_clock::now() + watch;
    for (;;) {
        int status = 0;
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done < 0 && errno == EINTR) continue;
        if (done == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
            if (WIFEXITED(status)) return fmt::format("{} exited with status {}", argv[0], WEXITSTATUS(status));
            if (WIFSIGNALED(status)) return fmt::format("{} was killed by signal {}", argv[0], WTERMSIG(status));
            return fmt::format("{} failed", argv[0]);
        }
        if (done < 0) return {};  // not ours to reap any more (SIGCHLD ignored): nothing to report
        if (std::chrono::steady_clock::now() >= until) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Reaped by a thread of its own: the browser may outlive the flow (xdg-open's child),
    // and the flow must not block on it either way.
    std::thread([pid] {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }).detach();
    return {};
}

}  // namespace toolport::client::oauth
