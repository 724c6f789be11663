#include "client/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0].empty()) throw TransportError("no program to start: the command is empty");
    const std::string program = util::sanitize_for_message(argv[0], 200);
    int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
        int error = errno;
        for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) {
            if (fd >= 0) ::close(fd);
        }
        throw TransportError(fmt::format("cannot start \"{}\": no pipe ({})", program, std::strerror(error)));
    }
    for (int* fd : {&to_child[0], &to_child[1], &from_child[0], &from_child[1]}) *fd = above_stdio(*fd);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    // The child gets default signal handling and an empty mask: we ignore SIGPIPE (a
    // write to a dead child must be an error, not our death), which exec would pass on.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, argv[0].c_str(), &actions, &attributes, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (rc != 0) {
        pid_ = -1;
        ::close(to_child[1]);
        ::close(from_child[0]);
        throw TransportError(fmt::format("cannot start \"{}\": {}", program, std::strerror(rc)));
    }
    stdin_fd_ = to_child[1];
    stdout_fd_ = from_child[0];
}

ChildProcess::~ChildProcess() {
    close_fd(stdin_fd_);
    close_fd(stdout_fd_);
    if (pid_ > 0 && !try_wait()) {
        signal(SIGKILL);
        wait();
    }
}

std::optional<int> ChildProcess::try_wait() {
    if (status_ || pid_ <= 0) return status_;
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) status_ = status;
    else if (r < 0 && errno == ECHILD) status_ = 0;  // reaped elsewhere (nothing more to learn)
    return status_;
}

void ChildProcess::signal(int sig) {
    if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

int ChildProcess::wait() {
    if (status_ || pid_ <= 0) return status_.value_or(0);
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    status_ = r == pid_ ? status : 0;
    return *status_;
}

std::string ChildProcess::describe_status(int wait_status) {
    if (WIFEXITED(wait_status)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status)) {
        const char* name = ::strsignal(WTERMSIG(wait_status));
        return fmt::format("was killed by signal {} ({})", WTERMSIG(wait_status), name ? name : "unknown");
    }
    return "ended";
}

}  // namespace toolport::client
