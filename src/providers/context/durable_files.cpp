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

}  // namespace toolport::context
