// RedisClient: one connection to Redis on the process's Asio event loop, through hiredis's
// async API (the Asio adapter that hiredis calls to watch its socket is in
// redis_client.cpp, with every hiredis and Asio include).
//
//   RedisClient client(asio_executor, {endpoint, 250ms, 1000ms});
//   client.start();                                  // returns at once; connects in the background
//   RedisReply r = co_await client.command({"GET", key});   // throws RedisUnavailable when away
//
// Commands are sent as an argument vector (each argument binary-safe, never formatted
// into a command string) and pipelined on the one connection. After connecting, the client
// authenticates and selects the database from the endpoint and PINGs; only then is it
// ready(). While it is down it retries every reconnect_interval, forever.
//
// Lifetime: on the loop thread only; the executor and its io_context must outlive it.
// Destroy it with no command in flight (or after the loop has stopped); commands still
// pending then complete with RedisUnavailable.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "async/task.hpp"
#include "stores/redis_reply.hpp"
#include "stores/redis_url.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::stores {

// Redis could not answer: not connected, the connection broke before the reply, or the
// reply took longer than the command timeout (the connection is then dropped and
// re-established, so a hung server cannot pile up commands).
struct RedisUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class RedisClient {
public:
    struct Options {
        RedisEndpoint endpoint;
        std::chrono::milliseconds command_timeout{250};
        std::chrono::milliseconds reconnect_interval{1000};
        // Subscriber mode: once connected the client SUBSCRIBEs to these channels (again
        // after every reconnect) and is ready() only when Redis has confirmed them; every
        // message is handed to on_message on the loop. command() is then not to be used:
        // Redis takes no other command on a subscribed connection.
        std::vector<std::string> subscribe;
        std::function<void(std::string channel, std::string payload)> on_message;
    };

    RedisClient(AsioExecutor& executor, Options options);
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    // Starts connecting; never blocks (host names are resolved asynchronously).
    void start();
    // Connected, authenticated, database selected.
    bool ready() const;
    // Times a connection became ready (tests use it to see a reconnect).
    std::uint64_t connections() const;
    const Options& options() const;

    // The reply, error replies included (they are data: the caller decides). Throws
    // RedisUnavailable when not ready(), on a lost connection, or after command_timeout.
    Task<RedisReply> command(std::vector<std::string> args);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toolport::stores
