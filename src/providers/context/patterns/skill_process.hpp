// Runs a skill's code in a child process, never inside Toolport: the program in a new
// process group, with a scrubbed environment (PATH, HOME and TMPDIR pointing at its scratch
// directory, LANG; no secret of ours), CPU, data-memory, file-size and open-file limits,
// the input on stdin and the output read from stdout up to a cap. When it runs past its
// time, writes too much, or the call is cancelled, the whole process group is killed; it
// is killed at the end in any case, and it dies with Toolport (PR_SET_PDEATHSIG).
//
// Sandboxed (spec.sandbox, skill_sandbox.hpp), the program runs under bwrap in namespaces
// of its own, its scratch directory a size-capped tmpfs that vanishes with it; the PID
// namespace takes every descendant along, setsid() or not. Unsandboxed (only when the
// operator allows it), the scratch directory is a fresh temporary directory, removed
// afterwards, and a child that leaves the group with setsid() may outlive the call.
//
// Blocking: run it on a thread of its own (a WorkerPool).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "providers/context/context_settings.hpp"
#include "providers/context/patterns/skill_sandbox.hpp"

namespace toolport::context {

struct SkillProcessSpec {
    std::vector<std::string> argv;  // argv[0] is an absolute path or a name looked up in PATH
    std::string stdin_data;
    SkillLimits limits;
    std::chrono::milliseconds timeout{10000};
    std::size_t max_stderr = 16 * 1024;  // kept for error messages
    // Run under bwrap (its program and seccomp descriptor are filled in here). Paths in
    // argv are then the sandbox's (kSandboxSkillDir).
    std::optional<SandboxLayout> sandbox;
};

struct SkillProcessResult {
    enum class End { exited, signaled, timed_out, output_too_large, cancelled, failed_to_start };
    End end = End::exited;
    int exit_code = 0;  // when exited
    int signal = 0;     // when signaled
    std::string out;
    std::string err;  // the first max_stderr bytes of stderr
    std::chrono::milliseconds duration{0};
    std::string start_error;  // when failed_to_start
};

// Runs the process to its end. `cancel` is polled (every 50 ms); `tick` is called about
// once a second while it runs, with the time so far (for progress notifications).
SkillProcessResult run_skill_process(const SkillProcessSpec& spec, const std::atomic<bool>& cancel,
                                     const std::function<void(std::chrono::milliseconds)>& tick);

// `name` looked up in /usr/local/bin, /usr/bin, /bin, then this process's PATH; empty
// when not found.
std::string find_program(const std::string& name);

}  // namespace toolport::context
