#include "client/oauth/browser.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
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

BrowserProcess::BrowserProcess(const std::vector<std::string>& argv) {
    if (argv.empty()) throw std::runtime_error("no browser command");
    name_ = argv[0];
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
    if (rc != 0) throw std::runtime_error(fmt::format("could not start {}: {}", name_, std::strerror(rc)));
    pid_ = pid;
}

std::optional<std::string> BrowserProcess::ended() {
    if (ended_) return ended_;
    int status = 0;
    pid_t done = -1;
    do {
        done = ::waitpid(pid_, &status, WNOHANG);
    } while (done < 0 && errno == EINTR);
    if (done == 0) return std::nullopt;
    if (done < 0) {
        ended_ = "";  // not ours to reap any more (SIGCHLD ignored): nothing to report
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        ended_ = "";
    } else if (WIFEXITED(status)) {
        ended_ = fmt::format("{} exited with status {}", name_, WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        ended_ = fmt::format("{} was killed by signal {}", name_, WTERMSIG(status));
    } else {
        ended_ = fmt::format("{} failed", name_);
    }
    return ended_;
}

BrowserProcess::~BrowserProcess() {
    if (pid_ < 0 || ended_) return;
    // Reaped by a thread of its own: the browser may outlive the flow (xdg-open's child),
    // and the flow must not block on it either way.
    std::thread([pid = pid_] {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    }).detach();
}

}  // namespace toolport::client::oauth
