// ChildProcess: a program started with posix_spawnp from an argument vector (never through
// a shell), its stdin and stdout on pipes for us, its stderr shared with ours or on a pipe
// too. Plain POSIX, no Asio: the stdio transport puts the pipe ends on its event loop.
//
// The child leads a process group of its own, and every signal goes to that whole group:
// what it starts in turn (npx -> node, sh -c -> the program) dies with it. Once the child
// has exited, the group is killed before the child is reaped (its pid, and so the group's
// id, cannot be reused before that), so no straggler outlives it either. A grandchild that
// leaves the group (setsid, a daemon) is beyond reach.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace toolport::client {

struct ChildProcessOptions {
    // The program and its arguments. argv[0] without a slash is looked up in PATH: the
    // PATH `env` sets, else ours.
    std::vector<std::string> argv;
    // Set in the child's environment on top of what it inherits (a value replaces ours).
    std::map<std::string, std::string> env;
    // What the child inherits of our environment: only kInheritedEnvironment (false), as
    // the MCP SDKs do for the servers they start, or all of it (true). Our environment
    // holds our own secrets (bearer and profile tokens, API keys), which a child has no
    // business seeing; it gets what it needs through `env`.
    bool inherit_env = false;
    // The child's working directory; empty: ours.
    std::string cwd;
    // Give the child's stderr a pipe (take_stderr) instead of ours.
    bool pipe_stderr = false;
};

// The variables a child inherits without inherit_env (when we have them): enough to find
// programs, a home, a locale, a terminal type and a temporary directory.
inline constexpr const char* kInheritedEnvironment[] = {"PATH", "HOME",    "LANG",  "TERM",
                                                        "USER", "LOGNAME", "SHELL", "TMPDIR"};

class ChildProcess {
public:
    // Starts the program. Throws TransportError naming the program and the reason (e.g.
    // "No such file or directory"), or the working directory that is missing.
    explicit ChildProcess(const ChildProcessOptions& options);
    // A child still running is killed (SIGKILL to its group) and reaped: none is ever
    // left behind. Pipe ends not taken are closed.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // The child's pid, which is also its process group's id.
    pid_t pid() const { return pid_; }
    // The pipe ends; take_* hands ownership (and the duty to close) to the caller.
    // take_stderr is -1 unless pipe_stderr was asked for.
    int take_stdin() { return std::exchange(stdin_fd_, -1); }
    int take_stdout() { return std::exchange(stdout_fd_, -1); }
    int take_stderr() { return std::exchange(stderr_fd_, -1); }

    // Reaps the child if it has exited (killing what is left of its group first);
    // returns its wait status then (and from then on).
    std::optional<int> try_wait();
    bool exited() const { return status_.has_value(); }
    // Sends `sig` to the child's process group unless the child was already reaped.
    void signal(int sig);
    // Blocks until the child exits (after SIGKILL, it does), then reaps it as try_wait does.
    int wait();

    // "exited with status 3", "was killed by signal 9 (Killed)".
    static std::string describe_status(int wait_status);

private:
    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    int stderr_fd_ = -1;
    std::optional<int> status_;

    // Waits (or, with `block` false, looks) for the child's exit without reaping it,
    // kills its group, then reaps it.
    std::optional<int> reap(bool block);
};

}  // namespace toolport::client
