#include "providers/context/durable_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "providers/context/envelope.hpp"

namespace toolport::context {

OwnedFd::~OwnedFd() {
    if (fd >= 0) ::close(fd);
}

void io_failure(const std::string& doing) {
    throw ContextError(ErrorCode::filesystem_error, fmt::format("cannot {}: {}", doing, std::strerror(errno)));
}

void write_new_file_at(int dir_fd, const char* name, const std::string& text) {
    // O_EXCL: never an existing file, so never a FIFO planted at the name.
    OwnedFd f{::openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)};
    if (f.fd < 0) io_failure(fmt::format("create {}", name));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(f.fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            io_failure(fmt::format("write {}", name));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(f.fd) != 0) io_failure(fmt::format("flush {}", name));
}

const char* file_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISLNK(mode)) return "a symlink";
    return "not a regular file";
}

void require_regular_file(int fd, const std::string& shown, struct stat* st) {
    struct stat own {};
    struct stat& s = st ? *st : own;
    if (::fstat(fd, &s) != 0) io_failure(fmt::format("inspect {}", shown));
    if (!S_ISREG(s.st_mode)) {
        throw ContextError(
            ErrorCode::filesystem_error,
            fmt::format("{} is {}, not a regular file; it is not read or written", shown, file_kind(s.st_mode)),
            fmt::format("Remove or rename {} in the project; the server creates it as a regular file when "
                        "it needs one.",
                        shown));
    }
}

int open_regular_file_at(int dir_fd, const char* name, int flags, const std::string& shown, mode_t mode) {
    const int fd = ::openat(dir_fd, name, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    OwnedFd guard{fd};
    require_regular_file(fd, shown);
    guard.fd = -1;
    return fd;
}

namespace {

[[noreturn]] void too_large(const std::string& shown, std::size_t max_bytes) {
    const bool mib = max_bytes >= (1u << 20) && max_bytes % (1u << 20) == 0;
    throw ContextError(ErrorCode::filesystem_error,
                       fmt::format("{} is larger than {} {}", shown, mib ? max_bytes >> 20 : max_bytes >> 10,
                                   mib ? "MiB" : "KiB"));
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& file, std::size_t max_bytes, const std::string& shown) {
    OwnedFd f{::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)};
    if (f.fd < 0) io_failure(fmt::format("open {}", shown));
    struct stat st {};
    require_regular_file(f.fd, shown, &st);
    if (static_cast<std::size_t>(st.st_size) > max_bytes) too_large(shown, max_bytes);
    std::string text;
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            io_failure(fmt::format("read {}", shown));
        }
        if (n == 0) break;
        // It grew while read: still no more than the limit.
        if (text.size() + static_cast<std::size_t>(n) > max_bytes) too_large(shown, max_bytes);
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

}  // namespace toolport::context
