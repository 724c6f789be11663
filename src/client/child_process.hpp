// ChildProcess: a program started with posix_spawnp from an argument vector (never through
// a shell), its stdin and stdout on pipes for us, its stderr shared with ours. Plain POSIX,
// no Asio: the stdio transport puts the pipe ends on its event loop.
#pragma once

#include <sys/types.h>

#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace toolport::client {

class ChildProcess {
public:
    // Starts argv[0] (looked up in PATH when it has no slash) with argv. Throws
    // TransportError naming the program and the reason (e.g. "No such file or directory").
    explicit ChildProcess(const std::vector<std::string>& argv);
    // A child still running is killed (SIGKILL) and reaped: none is ever left behind.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // The pipe ends; take_* hands ownership (and the duty to close) to the caller.
    int take_stdin() { return std::exchange(stdin_fd_, -1); }
    int take_stdout() { return std::exchange(stdout_fd_, -1); }

    // Reaps the child if it has exited; returns its wait status then (and from then on).
    std::optional<int> try_wait();
    bool exited() const { return status_.has_value(); }
    // Sends `sig` unless the child was already reaped.
    void signal(int sig);
    // Blocks until the child exits (after SIGKILL, it does).
    int wait();

    // "exited with status 3", "was killed by signal 9 (Killed)".
    static std::string describe_status(int wait_status);

private:
    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    std::optional<int> status_;
};

}  // namespace toolport::client
