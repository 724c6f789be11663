#include "client/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "client/client_errors.hpp"
#include "util/sanitize.hpp"

extern char** environ;

namespace toolport::client {

namespace {

// Moves a pipe end above 2: were our own stdin or stdout closed, pipe2 could hand out
// fd 0 or 1, and the child's dup2 onto that same number would not clear close-on-exec.
int above_stdio(int fd) {
    if (fd > 2) return fd;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    ::close(fd);
    return moved;
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Both ends of a pipe, closed by the destructor unless released: no path out of the
// constructor (a failed spawn, an exception) leaks one.
struct Pipe {
    int read = -1;
    int write = -1;

    Pipe() = default;
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    ~Pipe() {
        close_fd(read);
        close_fd(write);
    }

    // Returns errno on failure (both ends then stay -1).
    int open() {
        int fds[2] = {-1, -1};
        if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
        read = above_stdio(fds[0]);
        write = above_stdio(fds[1]);
        if (read < 0 || write < 0) {
            int error = errno;
            close_fd(read);
            close_fd(write);
            return error;
        }
        return 0;
    }
};

bool valid_environment_name(const std::string& name) {
    return !name.empty() && name.find('=') == std::string::npos && name.find('\0') == std::string::npos;
}

bool inherited_by_default(std::string_view name) {
    for (const char* allowed : kInheritedEnvironment) {
        if (name == allowed) return true;
    }
    return false;
}

// What the child inherits of our environment (all of it, or the allow-list) with
// `overrides` set on top, as NAME=value strings.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides, bool inherit_all) {
    std::vector<std::string> entries;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string_view text(*entry);
        const auto equals = text.find('=');
        if (equals == std::string_view::npos) continue;
        const std::string_view name = text.substr(0, equals);
        if (!inherit_all) {
            // A shell function exported by bash ("() { ...") is no value a server needs.
            if (!inherited_by_default(name) || text.substr(equals + 1).rfind("()", 0) == 0) continue;
        }
        if (overrides.count(std::string(name)) != 0) continue;
        entries.emplace_back(text);
    }
    for (const auto& [name, value] : overrides) entries.push_back(name + "=" + value);
    return entries;
}

// posix_spawnp searches the PATH of our environment, not the child's. When the child's
// is another one, the program is looked up in that, as the child's own execvp would.
std::optional<std::string> find_in_path(const std::string& program, std::string_view path) {
    for (;;) {
        const auto colon = path.find(':');
        std::string dir(path.substr(0, colon));
        std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
        struct stat info {};
        if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        if (colon == std::string_view::npos) return std::nullopt;
        path.remove_prefix(colon + 1);
    }
}

}  // namespace

ChildProcess::ChildProcess(const ChildProcessOptions& options) {
    const auto& argv = options.argv;
    if (argv.empty() || argv[0].empty()) throw TransportError("no program to start: the command is empty");
    const std::string program = util::sanitize_for_message(argv[0], 200);
    auto fail = [&](const std::string& reason) {
        return TransportError(fmt::format("cannot start \"{}\": {}", program, reason));
    };

    for (const auto& [name, value] : options.env) {
        const std::string shown = util::sanitize_for_message(name, 100);
        if (!valid_environment_name(name)) throw fail(fmt::format("\"{}\" is no environment variable name", shown));
        if (value.find('\0') != std::string::npos) {
            throw fail(fmt::format("the value of environment variable \"{}\" holds a NUL byte", shown));
        }
    }
    if (!options.cwd.empty()) {
        // Checked here because a failed chdir in the child would read as the program's
        // own "No such file or directory".
        struct stat info {};
        const std::string shown = util::sanitize_for_message(options.cwd, 200);
        if (::stat(options.cwd.c_str(), &info) != 0) {
            throw fail(fmt::format("working directory \"{}\": {}", shown, std::strerror(errno)));
        }
        if (!S_ISDIR(info.st_mode)) throw fail(fmt::format("working directory \"{}\" is not a directory", shown));
    }
    std::string executable = argv[0];
    if (auto path = options.env.find("PATH"); path != options.env.end() && argv[0].find('/') == std::string::npos) {
        auto found = find_in_path(argv[0], path->second);
        if (!found) throw fail(std::strerror(ENOENT));
        executable = std::move(*found);
    }
    std::vector<std::string> environment = child_environment(options.env, options.inherit_env);

    Pipe to_child, from_child, errors;
    int error = to_child.open();
    if (error == 0) error = from_child.open();
    if (error == 0 && options.pipe_stderr) error = errors.open();
    if (error != 0) throw fail(fmt::format("no pipe ({})", std::strerror(error)));

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child.read, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child.write, STDOUT_FILENO);
    if (options.pipe_stderr) posix_spawn_file_actions_adddup2(&actions, errors.write, STDERR_FILENO);
    if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
    // The child gets default signal handling and an empty mask: we ignore SIGPIPE (a
    // write to a dead child must be an error, not our death), which exec would pass on.
    // It leads a new process group (pgroup 0: its own pid), which our signals address.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    env.reserve(environment.size() + 1);
    for (auto& entry : environment) env.push_back(entry.data());
    env.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, executable.c_str(), &actions, &attributes, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
        pid_ = -1;
        throw fail(std::strerror(rc));
    }
    // The child's ends are its own now; ours stay with us.
    stdin_fd_ = std::exchange(to_child.write, -1);
    stdout_fd_ = std::exchange(from_child.read, -1);
    stderr_fd_ = std::exchange(errors.read, -1);
}

ChildProcess::~ChildProcess() {
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    close_fd(stderr_fd_);
    if (pid_ > 0 && !try_wait()) {
        signal(SIGKILL);
        wait();
    }
}

std::optional<int> ChildProcess::reap(bool block) {
    if (status_ || pid_ <= 0) return status_;
    siginfo_t info{};
    int r;
    do {
        r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        status_ = 0;  // reaped elsewhere (nothing more to learn, and its group id is not ours to use)
        return status_;
    }
    if (info.si_pid == 0) return std::nullopt;  // still running
    // Exited but not reaped: its pid, the group's id, cannot have been reused, so this
    // reaches only what the child left behind in its group (ESRCH: nothing).
    ::kill(-pid_, SIGKILL);
    int status = 0;
    pid_t reaped;
    do {
        reaped = ::waitpid(pid_, &status, 0);
    } while (reaped < 0 && errno == EINTR);
    status_ = reaped == pid_ ? status : 0;
    return status_;
}

std::optional<int> ChildProcess::try_wait() { return reap(false); }

void ChildProcess::signal(int sig) {
    if (pid_ > 0 && !status_) ::kill(-pid_, sig);
}

int ChildProcess::wait() { return reap(true).value_or(0); }

std::string ChildProcess::describe_status(int wait_status) {
    if (WIFEXITED(wait_status)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status)) {
        const char* name = ::strsignal(WTERMSIG(wait_status));
        return fmt::format("was killed by signal {} ({})", WTERMSIG(wait_status), name ? name : "unknown");
    }
    return "ended";
}

}  // namespace toolport::client
