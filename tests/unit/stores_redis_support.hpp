// Support for the Redis store tests: a real redis-server child process on a free loopback
// port in a temporary directory, and helpers that run an io_context until a task finishes
// or a condition holds.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "async/task.hpp"

extern char** environ;

namespace toolport::test_support {
// Internal linkage: clang 14 cannot build coroutine frames with inline (COMDAT) linkage
// under -fsanitize=function, which spawn() with a lambda from an inline function would make.
namespace {

inline constexpr const char* redis_server_path = "/usr/bin/redis-server";

inline bool redis_server_installed() { return ::access(redis_server_path, X_OK) == 0; }

// A loopback port nothing listens on right now (the kernel picks it).
inline std::uint16_t free_loopback_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot find a free loopback port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

// redis-server --port P --bind 127.0.0.1 --save '' --appendonly no, in its own temp dir,
// started without a shell. kill() is SIGKILL: Redis dies as in a crash.
class RedisServerProcess {
public:
    // Without a port: a free one, chosen again should another process take it first.
    explicit RedisServerProcess(std::vector<std::string> extra_args = {})
        : RedisServerProcess(free_loopback_port(), std::move(extra_args)) {
        port_is_fixed_ = false;
    }
    RedisServerProcess(std::uint16_t port, std::vector<std::string> extra_args)
        : port_(port), extra_args_(std::move(extra_args)) {
        char pattern[] = "/tmp/toolport-redis-test-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
    }
    ~RedisServerProcess() {
        kill();
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
    RedisServerProcess(const RedisServerProcess&) = delete;
    RedisServerProcess& operator=(const RedisServerProcess&) = delete;

    std::uint16_t port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    bool running() const { return pid_ > 0; }

    // Starts the server and returns once it answers PING.
    void start() {
        for (int attempt = 1;; ++attempt) {
            if (try_start()) return;
            // Another process took the port between our check and redis-server's bind
            // (tests run in parallel). Restarts keep their port: the test chose it.
            if (port_is_fixed_ || started_before_ || attempt == 5)
                throw std::runtime_error("redis-server exited at start (port " + std::to_string(port_) + " taken?)");
            port_ = free_loopback_port();
        }
    }

    // SIGKILL: the server vanishes mid-whatever, as in a crash.
    void kill() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGCONT);  // in case it was paused
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    // SIGSTOP / SIGCONT: a hung server that keeps its connections open.
    void pause() { ::kill(pid_, SIGSTOP); }
    void resume() { ::kill(pid_, SIGCONT); }

private:
    bool try_start() {
        if (pid_ > 0) return true;
        std::vector<std::string> args = {redis_server_path,
                                         "--port",
                                         std::to_string(port_),
                                         "--bind",
                                         "127.0.0.1",
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--dir",
                                         dir_.string(),
                                         "--logfile",
                                         (dir_ / "redis.log").string(),
                                         "--daemonize",
                                         "no"};
        args.insert(args.end(), extra_args_.begin(), extra_args_.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        if (::posix_spawn(&pid, redis_server_path, nullptr, nullptr, argv.data(), environ) != 0)
            throw std::runtime_error("cannot start redis-server");
        pid_ = pid;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!answers_ping()) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
            if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("redis-server did not start");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        started_before_ = true;
        return true;
    }

    bool answers_ping() const {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return false;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port_);
        bool ok = false;
        timeval timeout{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
            const char ping[] = "PING\r\n";
            if (::send(fd, ping, sizeof ping - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof ping - 1)) {
                char reply[64] = {};
                auto n = ::recv(fd, reply, sizeof reply - 1, 0);
                // "+PONG", or "-NOAUTH" when a password is required: either way it is serving.
                ok = n > 0 &&
                     (std::string(reply, n).rfind("+PONG", 0) == 0 || std::string(reply, n).rfind("-NOAUTH", 0) == 0);
            }
        }
        ::close(fd);
        return ok;
    }

    std::uint16_t port_;
    bool port_is_fixed_ = true;
    bool started_before_ = false;
    std::vector<std::string> extra_args_;
    std::filesystem::path dir_;
    pid_t pid_ = -1;
};

// Runs `io` until `done()` holds. The limit only keeps a broken build from hanging the
// test run; no test asserts how long anything takes.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(15)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        if (io.stopped()) io.restart();
        if (io.run_for(std::chrono::milliseconds(5)) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// Runs `io` for about `duration` (to let reconnect attempts happen, for instance).
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    run_until(
        io, [&] { return std::chrono::steady_clock::now() >= until; }, duration + std::chrono::seconds(1));
}

// Runs `io` until `task` finishes; returns its value or rethrows its exception.
template <typename T>
T run_task(boost::asio::io_context& io, Task<T> task) {
    std::optional<T> value;
    std::exception_ptr error;
    bool done = false;
    spawn(std::move(task), [&](std::optional<T> v, std::exception_ptr e) {
        value = std::move(v);
        error = e;
        done = true;
    });
    if (!run_until(io, [&] { return done; })) throw std::runtime_error("the task did not finish");
    if (error) std::rethrow_exception(error);
    return std::move(*value);
}

inline void run_task(boost::asio::io_context& io, Task<void> task) {
    std::exception_ptr error;
    bool done = false;
    spawn(std::move(task), [&](std::exception_ptr e) {
        error = e;
        done = true;
    });
    if (!run_until(io, [&] { return done; })) throw std::runtime_error("the task did not finish");
    if (error) std::rethrow_exception(error);
}

}  // namespace
}  // namespace toolport::test_support
