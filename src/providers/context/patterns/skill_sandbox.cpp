#include "providers/context/patterns/skill_sandbox.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <sched.h>

#include "providers/context/patterns/skill_process.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

// The folders of the system's programs and libraries, bound read-only (or recreated as the
// symlinks they are on a merged-/usr system).
constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

// What of /etc runtimes need (the dynamic loader's cache, alternatives' links, user and
// group names, the time zone) — not the rest, which may hold an operator's configuration
// and secrets. Each entry is a bind mount, and mounts are most of the sandbox's start-up
// cost: no certificates or resolver files (there is no network to use them on).
constexpr const char* kEtcEntries[] = {"ld.so.cache", "alternatives", "passwd", "group", "nsswitch.conf", "localtime"};

// The devices a program may use; no terminal, no /dev/shm. They sit on the sandbox's root
// (made read-only), not on a tmpfs of their own: fewer mounts than bwrap's --dev.
constexpr const char* kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

bool under(const fs::path& path, const fs::path& dir) {
    auto p = path.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
        if (p == path.end() || *p != *d) return false;
    }
    return true;
}

// Whether a resolved path lies in the system folders the sandbox binds anyway.
bool in_system_dirs(const fs::path& real) {
    std::error_code ec;
    for (const char* dir : kSystemDirs) {
        const fs::path d = fs::weakly_canonical(dir, ec);
        if (!ec && under(real, d)) return true;
    }
    return false;
}

}  // namespace

std::string sandbox_program(const std::string& program) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(program, ec);
    if (ec || real.empty() || in_system_dirs(real)) return program;
    return real.string();
}

std::vector<std::string> bwrap_arguments(const SandboxLayout& layout) {
    // --as-pid-1: the skill is its PID namespace's init, without bwrap's reaper in between:
    // one process fewer to start and hand over to (most of the start-up time on a loaded
    // machine). When it ends, the kernel kills whatever it left behind all the same.
    std::vector<std::string> args = {layout.bwrap,    "--unshare-all", "--as-pid-1", "--die-with-parent",
                                     "--new-session", "--cap-drop",    "ALL"};
    auto add = [&args](std::initializer_list<std::string> more) { args.insert(args.end(), more); };
    std::error_code ec;
    for (const char* dir : kSystemDirs) {
        const auto status = fs::symlink_status(dir, ec);
        if (ec || !fs::exists(status)) continue;
        if (fs::is_symlink(status)) {
            add({"--symlink", fs::read_symlink(dir, ec).string(), dir});
        } else if (fs::is_directory(status)) {
            add({"--ro-bind", dir, dir});
        }
    }
    for (const char* entry : kEtcEntries) {
        const std::string path = std::string("/etc/") + entry;
        if (fs::exists(fs::symlink_status(path, ec))) add({"--ro-bind-try", path, path});
    }
    if (!layout.program.empty()) {
        const fs::path real = fs::weakly_canonical(layout.program, ec);
        // A runtime installed elsewhere (a version manager's <prefix>/bin/node): the program
        // itself and its prefix's lib/, read-only at the same place — not the whole prefix,
        // which may be a home directory (~/bin/node).
        if (!ec && !real.empty() && !in_system_dirs(real)) {
            add({"--ro-bind", real.string(), real.string()});
            const fs::path bin = real.parent_path();
            if (bin.filename() == "bin" && bin.has_parent_path()) {
                const fs::path lib = bin.parent_path() / "lib";
                if (fs::is_directory(lib, ec)) add({"--ro-bind", lib.string(), lib.string()});
            }
        }
    }
    add({"--proc", "/proc"});
    for (const char* device : kDevices) add({"--dev-bind", device, device});
    add({"--symlink", "/proc/self/fd", "/dev/fd", "--symlink", "/proc/self/fd/0", "/dev/stdin", "--symlink",
         "/proc/self/fd/1", "/dev/stdout", "--symlink", "/proc/self/fd/2", "/dev/stderr"});
    add({"--size", std::to_string(layout.scratch_bytes), "--tmpfs", kSandboxScratchDir});
    if (!layout.skill_dir.empty()) add({"--ro-bind", layout.skill_dir.string(), kSandboxSkillDir});
    // bwrap builds the view on a tmpfs root, writable and not capped: read-only once built,
    // so /tmp is the only place a skill writes.
    add({"--remount-ro", "/"});
    add({"--chdir", kSandboxScratchDir});
    if (layout.seccomp_fd >= 0) add({"--seccomp", std::to_string(layout.seccomp_fd)});
    args.emplace_back("--");
    return args;
}

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the skill sandbox's seccomp filter knows x86_64 and aarch64"
#endif

// Offsets into struct seccomp_data: the low 32 bits of a 64-bit argument.
constexpr std::uint32_t kNr = offsetof(struct seccomp_data, nr);
constexpr std::uint32_t kArch = offsetof(struct seccomp_data, arch);
constexpr std::uint32_t arg_low(int i) {
    return static_cast<std::uint32_t>(offsetof(struct seccomp_data, args)) + 8u * static_cast<std::uint32_t>(i) +
           (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4u : 0u);
}

// Refused with EPERM: nothing a skill's computation needs, each a way out of the sandbox
// or into the kernel's less travelled code.
constexpr long kDenied[] = {
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_unshare,
    __NR_setns,
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_perf_event_open,
    __NR_bpf,
    __NR_userfaultfd,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_kexec_load,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_reboot,
    __NR_swapon,
    __NR_swapoff,
    __NR_acct,
    __NR_syslog,
    __NR_quotactl,
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_settimeofday,
    __NR_clock_settime,
    __NR_clock_adjtime,
    __NR_adjtimex,
    __NR_vhangup,
    __NR_personality,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
#endif
#ifdef __NR_fsopen
    __NR_fsopen,
    __NR_fsconfig,
    __NR_fsmount,
    __NR_fspick,
    __NR_move_mount,
    __NR_open_tree,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
#ifdef __NR_iopl
    __NR_iopl,
    __NR_ioperm,
    __NR_modify_ldt,
    __NR_uselib,
    __NR_ustat,
    __NR_sysfs,
    __NR_lookup_dcookie,
#endif
};

// Namespaces a new process may not get (clone's flags; clone3 is refused with ENOSYS so
// the C library falls back to clone, whose flags a classic filter can read).
constexpr std::uint32_t kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                          CLONE_NEWUTS | CLONE_NEWCGROUP;

sock_filter stmt(std::uint16_t code, std::uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    return BPF_JUMP(code, k, jt, jf);
}

}  // namespace

std::string seccomp_program() {
    std::vector<sock_filter> p;
    const std::uint32_t deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    // Another architecture's system call numbers mean other calls: killed.
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kArch));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
#if defined(__x86_64__)
    // The x32 ABI's numbers (bit 30) alias the 64-bit ones the list names.
    p.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    for (long nr : kDenied) {
        p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
        p.push_back(stmt(BPF_RET | BPF_K, deny));
    }
#ifdef __NR_clone3
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
    // clone(flags, ...): no new namespace.
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0)));
    p.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, deny));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    // ioctl(fd, cmd): no typing into a terminal (TIOCSTI) or console tricks (TIOCLINUX).
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5));
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(1)));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, deny));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    return std::string(reinterpret_cast<const char*>(p.data()), p.size() * sizeof(sock_filter));
}

int seccomp_program_fd() {
    static const std::string program = seccomp_program();
    const int fd = static_cast<int>(::syscall(SYS_memfd_create, "toolport-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd < 0) return -1;
    std::size_t done = 0;
    while (done < program.size()) {
        const ssize_t w = ::write(fd, program.data() + done, program.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            const int e = errno;
            ::close(fd);
            errno = e;
            return -1;
        }
        done += static_cast<std::size_t>(w);
    }
    ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

namespace {

SandboxStatus probe(const std::string& configured) {
    SandboxStatus status;
    std::string bwrap = configured.empty() ? find_program("bwrap") : configured;
    if (bwrap.empty() || ::access(bwrap.c_str(), X_OK) != 0) {
        status.reason = configured.empty() ? "bubblewrap (bwrap) is not installed"
                                           : "the configured skill_bwrap program is missing or not executable";
        return status;
    }
    // One real run, with everything a skill gets: a kernel that refuses user namespaces
    // (or a seccomp filter it rejects) shows here, once, and not at a client's call.
    SkillProcessSpec spec;
    spec.argv = {"true"};
    spec.sandbox = SandboxLayout{};
    spec.sandbox->bwrap = bwrap;
    spec.sandbox->scratch_bytes = 1 << 20;
    spec.timeout = std::chrono::seconds(10);
    std::atomic<bool> never{false};
    const SkillProcessResult run = run_skill_process(spec, never, {});
    if (run.end == SkillProcessResult::End::exited && run.exit_code == 0) {
        status.available = true;
        status.bwrap = bwrap;
        return status;
    }
    std::string why = run.end == SkillProcessResult::End::failed_to_start ? run.start_error : run.err;
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    if (why.empty()) why = "a trial run ended with status " + std::to_string(run.exit_code);
    // bwrap says e.g. "No permissions to create new namespace, likely because the kernel
    // does not allow non-privileged user namespaces".
    status.reason = "bubblewrap cannot create the sandbox here: " + util::sanitize_for_message(why, 300);
    return status;
}

}  // namespace

const SandboxStatus& sandbox_status(const std::string& configured_bwrap) {
    static std::mutex mutex;
    static std::map<std::string, SandboxStatus> probed;  // never shrinks: one entry per setting
    std::lock_guard lock(mutex);
    auto it = probed.find(configured_bwrap);
    if (it == probed.end()) it = probed.emplace(configured_bwrap, probe(configured_bwrap)).first;
    return it->second;
}

}  // namespace toolport::context
