#include "providers/context/patterns/skill_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace toolport::context {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "toolport-skill-XXXXXX").string();
        if (::mkdtemp(pattern.data())) path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

}  // namespace

std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    // The system's directories first (the skill runs with only those on its PATH), then
    // ours (a runtime installed elsewhere, e.g. by a version manager).
    const char* path = std::getenv("PATH");
    std::string dirs = std::string("/usr/local/bin:/usr/bin:/bin") + (path ? std::string(":") + path : std::string());
    std::size_t start = 0;
    while (start <= dirs.size()) {
        auto end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        const std::string dir = dirs.substr(start, end - start);
        if (!dir.empty()) {
            const std::string candidate = dir + "/" + name;
            struct stat st {};
            if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
                return candidate;
            }
        }
        start = end + 1;
    }
    return {};
}

SkillProcessResult run_skill_process(const SkillProcessSpec& spec, const std::atomic<bool>& cancel,
                                     const std::function<void(std::chrono::milliseconds)>& tick) {
    SkillProcessResult result;
    const auto started = Clock::now();
    TempDir work;
    if (work.path.empty()) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = std::string("cannot create a working directory: ") + std::strerror(errno);
        return result;
    }
    const std::string program = find_program(spec.argv.at(0));
    if (program.empty()) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = spec.argv[0] + " is not installed (not found in PATH)";
        return result;
    }

    // Everything the child needs is built before fork: after it, only async-signal-safe calls.
    std::vector<std::string> env_strings = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work.path.string(),
                                            "TMPDIR=" + work.path.string(), "LANG=C.UTF-8",
                                            "NODE_DISABLE_COLORS=1", "PYTHONDONTWRITEBYTECODE=1"};
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    args[0] = program;
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const std::string cwd = work.path.string();

    int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    const rlim_t cpu = static_cast<rlim_t>(spec.limits.cpu_seconds);
    const rlim_t data = static_cast<rlim_t>(spec.limits.memory_bytes);
    const rlim_t fsize = static_cast<rlim_t>(spec.limits.file_size_bytes);

    const pid_t pid = ::fork();
    if (pid == 0) {
        // The child: its own process group, limits, the pipes as 0/1/2, then exec.
        ::setpgid(0, 0);
        ::signal(SIGPIPE, SIG_DFL);
        struct rlimit lim;
        lim = {cpu, cpu + 1};
        ::setrlimit(RLIMIT_CPU, &lim);
        // Data segment, not address space: V8 reserves far more address space than it uses.
        lim = {data, data};
        ::setrlimit(RLIMIT_DATA, &lim);
        lim = {fsize, fsize};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        lim = {256, 256};
        ::setrlimit(RLIMIT_NOFILE, &lim);
        lim = {0, 0};
        ::setrlimit(RLIMIT_CORE, &lim);
        if (::chdir(cwd.c_str()) != 0) ::_exit(126);
        ::dup2(in_pipe[0], 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        ::execve(argv[0], argv.data(), envp.data());
        const int e = errno;
        [[maybe_unused]] auto n = ::write(exec_pipe[1], &e, sizeof e);
        ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(exec_pipe[1]);
    if (pid < 0) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = std::string("fork: ") + std::strerror(errno);
        ::close(in_pipe[1]);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        ::close(exec_pipe[0]);
        return result;
    }
    ::setpgid(pid, pid);  // also from here, so the group exists whoever runs first
    int exec_error = 0;
    if (::read(exec_pipe[0], &exec_error, sizeof exec_error) == sizeof exec_error) {
        ::close(exec_pipe[0]);
        ::waitpid(pid, nullptr, 0);
        close_fd(in_pipe[1]);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = "cannot run " + spec.argv[0] + ": " + std::strerror(exec_error);
        return result;
    }
    ::close(exec_pipe[0]);

    int in_fd = in_pipe[1], out_fd = out_pipe[0], err_fd = err_pipe[0];
    for (int fd : {in_fd, out_fd, err_fd}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::size_t written = 0;
    if (spec.stdin_data.empty()) close_fd(in_fd);
    auto kill_group = [pid] { ::kill(-pid, SIGKILL); };
    auto last_tick = started;
    int status = 0;
    bool reaped = false;
    bool killed = false;
    char buffer[65536];
    // Once the child is gone (or killed), what is left in the pipes is read for a moment;
    // a descendant that escaped the group must not keep the call open.
    std::optional<Clock::time_point> ending;

    while (out_fd >= 0 || err_fd >= 0 || !reaped) {
        const auto now = Clock::now();
        if ((reaped || killed) && !ending) ending = now;
        if (ending && reaped && now - *ending > std::chrono::milliseconds(500)) break;
        if (!killed) {
            if (cancel.load()) {
                result.end = SkillProcessResult::End::cancelled;
                killed = true;
            } else if (now - started >= spec.timeout) {
                result.end = SkillProcessResult::End::timed_out;
                killed = true;
            } else if (result.out.size() > spec.limits.output_bytes) {
                result.end = SkillProcessResult::End::output_too_large;
                killed = true;
            }
            if (killed) kill_group();
        }
        if (tick && now - last_tick >= std::chrono::seconds(1)) {
            last_tick = now;
            tick(std::chrono::duration_cast<std::chrono::milliseconds>(now - started));
        }
        pollfd fds[3];
        int n = 0;
        if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
        if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
        if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
        if (n > 0) {
            if (::poll(fds, n, 50) < 0 && errno != EINTR) break;
        } else {
            ::usleep(10000);  // pipes closed; waiting for the exit
        }
        if (in_fd >= 0) {
            const ssize_t w = ::write(in_fd, spec.stdin_data.data() + written, spec.stdin_data.size() - written);
            if (w > 0) written += static_cast<std::size_t>(w);
            if (written == spec.stdin_data.size() || (w < 0 && errno != EAGAIN && errno != EINTR)) close_fd(in_fd);
        }
        for (int* fd : {&out_fd, &err_fd}) {
            if (*fd < 0) continue;
            for (;;) {
                const ssize_t r = ::read(*fd, buffer, sizeof buffer);
                if (r > 0) {
                    std::string& sink = fd == &out_fd ? result.out : result.err;
                    const std::size_t cap = fd == &out_fd ? spec.limits.output_bytes + 1 : spec.max_stderr;
                    if (sink.size() < cap) sink.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(r), cap - sink.size()));
                    if (fd == &out_fd && result.out.size() > spec.limits.output_bytes) break;
                    continue;
                }
                if (r == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(*fd);
                break;
            }
        }
        if (!reaped) {
            const pid_t w = ::waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                reaped = true;
                // Children it forked and left behind go with it (and their pipe ends close).
                ::kill(-pid, SIGKILL);
            }
        }
    }
    close_fd(in_fd);
    close_fd(out_fd);
    close_fd(err_fd);
    kill_group();
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    if (!killed) {
        if (WIFEXITED(status)) {
            result.end = SkillProcessResult::End::exited;
            result.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            result.end = SkillProcessResult::End::signaled;
            result.signal = WTERMSIG(status);
        }
    }
    return result;
}

}  // namespace toolport::context
