#include "providers/context/patterns/skill_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// What the child does between clone and exec, all prepared beforehand: in the child only
// async-signal-safe system calls run, no allocation, no lock.
struct ChildSetup {
    char** argv;
    char** envp;
    const char* cwd;
    int stdin_fd, stdout_fd, stderr_fd, exec_error_fd;
    int inherited_fd;  // handed to the program (bwrap's --seccomp), -1 when none
    pid_t parent;
    rlim_t cpu, data, fsize;
};

// The child's side. It shares the parent's memory (CLONE_VM) until execve, on a stack of
// its own, so it writes nothing but its own locals; the sanitizers' bookkeeping is not
// meant for such a child and stays out of it.
__attribute__((no_sanitize("address", "undefined"))) int child_main(void* arg) {
    const ChildSetup& c = *static_cast<const ChildSetup*>(arg);
    // Signals were blocked by the parent before clone: a handler of ours must never run in
    // the child. Handled signals go back to their default, then the mask is cleared.
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction current;
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN && current.sa_handler != SIG_DFL) {
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            ::sigaction(sig, &dfl, nullptr);
        }
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // ignored in Toolport; a skill expects the default
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Its own process group (killed as one), killed when the thread that started it ends
    // (Toolport's skill threads last as long as the process), its limits, the pipes as
    // 0/1/2, then exec.
    // (Raw system calls: the sanitizers intercept prctl, and their bookkeeping stays out.)
    ::setpgid(0, 0);
    ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (static_cast<pid_t>(::syscall(SYS_getppid)) != c.parent) ::_exit(127);  // Toolport is already gone
    struct rlimit lim;
    lim = {c.cpu, c.cpu + 1};
    ::setrlimit(RLIMIT_CPU, &lim);
    // Data segment, not address space: V8 reserves far more address space than it uses.
    lim = {c.data, c.data};
    ::setrlimit(RLIMIT_DATA, &lim);
    lim = {c.fsize, c.fsize};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    lim = {256, 256};
    ::setrlimit(RLIMIT_NOFILE, &lim);
    lim = {0, 0};
    ::setrlimit(RLIMIT_CORE, &lim);
    int e = 0;
    // dup2 onto itself would keep close-on-exec (a pipe can get fd 0-2 when Toolport runs
    // with them closed): then the flag is cleared instead.
    auto place = [](int fd, int target) { return fd == target ? ::fcntl(fd, F_SETFD, 0) : ::dup2(fd, target); };
    const bool inherited = c.inherited_fd < 0 || ::fcntl(c.inherited_fd, F_SETFD, 0) == 0;
    if (::chdir(c.cwd) != 0 || !inherited || place(c.stdin_fd, 0) < 0 || place(c.stdout_fd, 1) < 0 ||
        place(c.stderr_fd, 2) < 0) {
        e = errno;
    } else {
        ::execve(c.argv[0], c.argv, c.envp);
        e = errno;
    }
    [[maybe_unused]] auto n = ::write(c.exec_error_fd, &e, sizeof e);
    ::_exit(127);
}

// Starts the child the way posix_spawn does (which cannot set resource limits):
// clone(CLONE_VM | CLONE_VFORK), so nothing of Toolport's memory is copied — fork() of a
// large process costs milliseconds in page tables and copy-on-write faults — and this
// thread waits until the child has called execve or died. Returns the pid, or -1 (errno).
pid_t spawn_child(ChildSetup& setup) {
    constexpr std::size_t kStack = 256 * 1024;
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -1;
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
    const int clone_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::munmap(stack, kStack);
    errno = clone_errno;
    return pid;
}

struct TempDir {
    fs::path path;
    explicit TempDir(bool make) {
        if (!make) return;
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
    // Sandboxed, the scratch directory is the sandbox's own tmpfs.
    const bool sandboxed = spec.sandbox.has_value();
    TempDir work(!sandboxed);
    if (!sandboxed && work.path.empty()) {
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
    // Sandboxed, bwrap gets this environment too (its PID 1 inside holds nothing of ours).
    const std::string scratch = sandboxed ? std::string(kSandboxScratchDir) : work.path.string();
    std::vector<std::string> env_strings = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                            "HOME=" + scratch,
                                            "TMPDIR=" + scratch,
                                            "LANG=C.UTF-8",
                                            "NODE_DISABLE_COLORS=1",
                                            "PYTHONDONTWRITEBYTECODE=1"};
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = spec.argv;
    args[0] = program;
    int seccomp_fd = -1;
    struct FdGuard {
        int& fd;
        ~FdGuard() { close_fd(fd); }
    } seccomp_guard{seccomp_fd};
    if (sandboxed) {
        seccomp_fd = seccomp_program_fd();
        if (seccomp_fd < 0) {
            result.end = SkillProcessResult::End::failed_to_start;
            result.start_error = std::string("cannot prepare the seccomp filter: ") + std::strerror(errno);
            return result;
        }
        SandboxLayout layout = *spec.sandbox;
        layout.program = program;
        layout.seccomp_fd = seccomp_fd;
        std::vector<std::string> wrapped = bwrap_arguments(layout);
        args[0] = sandbox_program(program);
        wrapped.insert(wrapped.end(), args.begin(), args.end());
        args = std::move(wrapped);
    }
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const std::string cwd = sandboxed ? std::string("/") : work.path.string();

    int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    ChildSetup setup;
    setup.argv = argv.data();
    setup.envp = envp.data();
    setup.cwd = cwd.c_str();
    setup.stdin_fd = in_pipe[0];
    setup.stdout_fd = out_pipe[1];
    setup.stderr_fd = err_pipe[1];
    setup.exec_error_fd = exec_pipe[1];
    setup.inherited_fd = seccomp_fd;
    setup.parent = ::getpid();
    setup.cpu = static_cast<rlim_t>(spec.limits.cpu_seconds);
    setup.data = static_cast<rlim_t>(spec.limits.memory_bytes);
    setup.fsize = static_cast<rlim_t>(spec.limits.file_size_bytes);

    const pid_t pid = spawn_child(setup);
    const int spawn_errno = errno;
    close_fd(seccomp_fd);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(exec_pipe[1]);
    if (pid < 0) {
        result.end = SkillProcessResult::End::failed_to_start;
        result.start_error = std::string("cannot start a process: ") + std::strerror(spawn_errno);
        ::close(in_pipe[1]);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        ::close(exec_pipe[0]);
        return result;
    }
    // (The child set its process group itself: with CLONE_VFORK it has exec'd or died by now.)
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
    // Readable once the child has exited; -1 where pidfds are unavailable (before Linux 5.3).
    // (The raw system call: glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage.)
    int exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
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
        pollfd fds[4];
        int n = 0;
        if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
        if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
        if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
        // The exit wakes the poll too (readable pidfd), so the result is not held back.
        if (exit_fd >= 0 && !reaped) fds[n++] = {exit_fd, POLLIN, 0};
        // Without a pidfd, the exit is looked for every millisecond once the pipes are shut.
        const int wait_ms = exit_fd >= 0 || out_fd >= 0 || err_fd >= 0 ? 50 : 1;
        if (n > 0) {
            if (::poll(fds, n, wait_ms) < 0 && errno != EINTR) break;
        } else {
            ::usleep(static_cast<useconds_t>(wait_ms) * 1000);
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
                    if (sink.size() < cap)
                        sink.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(r), cap - sink.size()));
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
    close_fd(exit_fd);
    kill_group();
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    if (!killed) {
        if (WIFEXITED(status) && sandboxed && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + NSIG) {
            // bwrap ends with 128 + N when the skill was killed by signal N (as shells do).
            result.end = SkillProcessResult::End::signaled;
            result.signal = WEXITSTATUS(status) - 128;
        } else if (WIFEXITED(status) && sandboxed && WEXITSTATUS(status) == 1 && result.err.rfind("bwrap: ", 0) == 0) {
            // bwrap's own failure (the sandbox could not be set up, the program not run).
            result.end = SkillProcessResult::End::failed_to_start;
            std::string why = result.err.substr(7);
            while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
            result.start_error = "the sandbox could not run it: " + util::sanitize_for_message(why, 300);
        } else if (WIFEXITED(status)) {
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
