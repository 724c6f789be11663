// The context pack's file primitives.
//
// Writing files that must survive a crash once a tool has said they are written: each is
// created beside its final place, written, fsync'd, then renamed into place (and the
// directory fsync'd by the caller), so a reader or a crash sees the old file or the new
// one, never half of one. Used by saveSession and extractPattern.
//
// Opening files a client's project holds: what sits at a file's name may be a FIFO, a
// device, a socket or a directory, and opening or reading a FIFO blocks until someone
// writes to it. Files are opened non-blocking and checked with fstat to be regular files
// before anything is read from them; anything else is a FILESYSTEM_ERROR that says what
// is there.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
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

// "a FIFO", "a directory", "a socket", ... : what a file type is, for messages.
const char* file_kind(mode_t mode);

// Throws FILESYSTEM_ERROR (with a suggestion) unless `fd` is a regular file; `shown` names
// it in the message (relative to the project, never a full path). Fills `st` when given.
void require_regular_file(int fd, const std::string& shown, struct stat* st = nullptr);

// Opens `name` in `dir_fd` with `flags` plus O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC and checks
// that it is a regular file. Returns -1 with errno set when it cannot be opened (ENOENT,
// ELOOP for a symlink, ...); throws FILESYSTEM_ERROR when it is not a regular file.
int open_regular_file_at(int dir_fd, const char* name, int flags, const std::string& shown, mode_t mode = 0);

// The whole of `file` (a path whose symlinks the caller already resolved), read
// without blocking on what is not a regular file and never through a symlink at its last
// name. FILESYSTEM_ERROR when it is not a regular file, is larger than `max_bytes`, or
// cannot be read; `shown` names it in messages.
std::string read_regular_file(const std::filesystem::path& file, std::size_t max_bytes, const std::string& shown);

}  // namespace toolport::context
