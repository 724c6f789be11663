// Writing files that must survive a crash once a tool has said they are written: each is
// created beside its final place, written, fsync'd, then renamed into place (and the
// directory fsync'd by the caller), so a reader or a crash sees the old file or the new
// one, never half of one. Used by saveSession and extractPattern.
#pragma once

#include <string>

namespace toolport::context {

// An open file descriptor, closed when it goes.
struct OwnedFd {
    int fd = -1;
    explicit OwnedFd(int f = -1) : fd(f) {}
    ~OwnedFd();
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
};

// FILESYSTEM_ERROR "cannot <doing>: <strerror(errno)>".
[[noreturn]] void io_failure(const std::string& doing);

// Creates `name` in `dir_fd` (never through a symlink, never over an existing file),
// writes `text` and fsyncs it. FILESYSTEM_ERROR on failure.
void write_new_file_at(int dir_fd, const char* name, const std::string& text);

}  // namespace toolport::context
