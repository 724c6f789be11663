#include "providers/context/memory/notes_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "providers/context/envelope.hpp"

namespace toolport::context {

namespace {

constexpr const char* kMemoryDir = ".agent-memory";
constexpr const char* kNotesFile = "session-notes.jsonl";

[[noreturn]] void io_failure(const std::string& doing) {
    throw ContextError(ErrorCode::filesystem_error,
                       fmt::format("cannot {} {}/{}: {}", doing, kMemoryDir, kNotesFile, std::strerror(errno)));
}

// Closes the descriptor (and so drops its lock) on every path out.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

bool write_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// The memory directory, created when missing; never followed through a symlink (it could
// point anywhere on the machine).
int open_memory_dir(const std::filesystem::path& project) {
    const std::string dir = (project / kMemoryDir).string();
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) io_failure("create the directory of");
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("{} in the project is a symlink or not a directory; notes are not written "
                                           "through it",
                                           kMemoryDir));
        }
        io_failure("open the directory of");
    }
    return fd;
}

}  // namespace

std::filesystem::path notes_path(const std::filesystem::path& project) { return project / kMemoryDir / kNotesFile; }

void append_note(const std::filesystem::path& project, const Note& note) {
    Fd dir{open_memory_dir(project)};
    // Relative to the directory just opened, without following a symlink planted as the
    // file itself.
    // Read-write: the last byte is checked for a line torn by a crash.
    Fd file{::openat(dir.fd, kNotesFile, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW)};
    bool created = false;
    if (file.fd < 0 && errno == ENOENT) {
        file.fd = ::openat(dir.fd, kNotesFile, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        created = file.fd >= 0;
    }
    if (file.fd < 0) io_failure("open");
    while (::flock(file.fd, LOCK_EX) != 0) {
        if (errno != EINTR) io_failure("lock");
    }
    // The original's key order: type, content, timestamp.
    std::string line = nlohmann::ordered_json{{"type", note.type}, {"content", note.content}, {"timestamp", note.timestamp}}
                           .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    line += '\n';
    // A line torn by an earlier crash must not swallow this note: start on a fresh line.
    struct stat st {};
    if (::fstat(file.fd, &st) == 0 && st.st_size > 0) {
        char last = '\n';
        if (::pread(file.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') line.insert(line.begin(), '\n');
    }
    if (!write_all(file.fd, line)) io_failure("append to");
    if (::fdatasync(file.fd) != 0) io_failure("flush");
    // A new file's name is durable only once its directory is.
    if (created && ::fsync(dir.fd) != 0) io_failure("flush the directory of");
}

NotesRead read_notes(const std::filesystem::path& project) {
    NotesRead out;
    const std::string path = notes_path(project).string();
    Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
    if (file.fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return out;
        if (errno == ELOOP) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("{}/{} is a symlink; notes are not read through it", kMemoryDir, kNotesFile));
        }
        io_failure("open");
    }
    while (::flock(file.fd, LOCK_SH) != 0) {
        if (errno != EINTR) io_failure("lock");
    }
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            io_failure("read");
        }
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    int line_number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + start, end - start);
        ++line_number;
        start = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank lines are not notes
        auto value = nlohmann::json::parse(line, nullptr, false);
        const bool usable = value.is_object() && value.contains("type") && value["type"].is_string() &&
                            value.contains("content") && value["content"].is_string();
        if (!usable) {
            out.skipped_lines.push_back(line_number);
            continue;
        }
        Note note{value["type"].get<std::string>(), value["content"].get<std::string>(), ""};
        if (auto ts = value.find("timestamp"); ts != value.end() && ts->is_string()) note.timestamp = ts->get<std::string>();
        out.notes.push_back(std::move(note));
    }
    return out;
}

}  // namespace toolport::context
