// The sandbox a skill runs in: bubblewrap (bwrap), started by skill_process.cpp in place of
// the skill's program. The skill gets
//
//   - its own user, PID, network, mount, IPC, UTS and cgroup namespaces (--unshare-all):
//     no process of the server visible, no network but its own loopback; its program is
//     the PID namespace's init, and when it ends (or the call kills bwrap) the kernel
//     kills every process left in the namespace, setsid() or not. (As init it does not
//     get SIGXCPU: past its CPU limit it is killed by the hard limit's SIGKILL.);
//   - a read-only view of the system's program and library folders and of a few files of
//     /etc, its pattern's folder read-only at /skill, and a size-limited tmpfs at /tmp
//     (HOME, TMPDIR, its working directory): the cap is on the total it writes, and the
//     rest of its view (the root and /dev included) is read-only; nothing of the server's
//     home, configuration, /run or /var;
//   - no capabilities (--cap-drop ALL), no_new_privs, and a seccomp filter (below) that
//     refuses the system calls a skill has no use for and that widen the kernel's attack
//     surface (mounts, new user namespaces, ptrace, BPF, keyrings, io_uring, modules...).
//
// bwrap rather than our own clone(CLONE_NEW*): it is a small, audited setuid-free tool
// built for exactly this (Flatpak's sandbox), handles the cases that are easy to get
// wrong (mount flags locked in a user namespace, a reaping PID 1, --die-with-parent),
// and works the same for root and for an unprivileged user.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace toolport::context {

// Whether skills can be sandboxed here, found once at start-up by running one.
struct SandboxStatus {
    bool available = false;
    std::string bwrap;   // the bwrap program used (when available)
    std::string reason;  // why it is unavailable (no absolute paths): for errors and /health
};

// What one sandboxed run needs besides the program.
struct SandboxLayout {
    std::string bwrap;                     // absolute path of bwrap
    std::filesystem::path skill_dir;       // bound read-only at /skill (empty: none)
    std::filesystem::path program;         // the resolved program; bound (with its prefix's lib/) when outside /usr
    long long scratch_bytes = 64LL << 20;  // the tmpfs at /tmp
    int seccomp_fd = -1;                   // from seccomp_program_fd()
};

// Where the pattern's folder appears inside the sandbox, and the scratch directory.
inline constexpr const char* kSandboxSkillDir = "/skill";
inline constexpr const char* kSandboxScratchDir = "/tmp";

// bwrap's argv up to and including "--" (the program and its arguments follow).
std::vector<std::string> bwrap_arguments(const SandboxLayout& layout);
// The path to run `program` by inside the sandbox: as is within the system folders (a
// symlink there resolves inside too), else its resolved path (the one that is bound).
std::string sandbox_program(const std::string& program);

// The seccomp filter as the raw classic-BPF program bwrap's --seccomp reads (an array of
// struct sock_filter), for the architecture Toolport was built for.
std::string seccomp_program();
// A sealed memfd holding seccomp_program(), close-on-exec (the child clears the flag on
// its copy); -1 with errno on failure. One per run: bwrap reads it from its offset.
int seccomp_program_fd();

// Probes the sandbox once per process and `bwrap` setting (empty: looked up in the
// system's folders): runs `true` in it. Thread-safe; later calls return the first answer.
const SandboxStatus& sandbox_status(const std::string& configured_bwrap);

}  // namespace toolport::context
