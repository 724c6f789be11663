// SharedSessions: what replicas on one Redis share of a Streamable HTTP session
// (`sessions: shared`), so that any replica can serve any request of it.
//
//   - The session's state (SharedSessionState: negotiated revision, client capabilities and
//     info, log level, resource subscriptions, and whom it belongs to) is a record in Redis
//     that expires after the idle timeout unless a replica touches it. Each replica keeps a
//     copy (the local ServerSession) and is told of every change through the bus.
//   - The bus is one Redis pub/sub channel: "changed" (a replica saved new state), "ended"
//     (DELETE on some replica), "event" (a message for the session's GET stream, which
//     may be held open on another replica), "stream" (an event of a POST's response
//     stream, for a client that resumes it on another replica), "relay" (a client's reply or cancellation that
//     reached a replica other than the one it is for), and "task" (a client's answers for a
//     task that runs on another replica: server/tasks.hpp's relay).
//   - GET-stream events are numbered per session by Redis and kept (bounded) in a log, so a
//     client resuming with Last-Event-ID on any replica gets what it missed.
//
// The transport (http_endpoint.cpp) decides what to share and when; this is storage and
// delivery only. The Redis implementation is redis_shared_sessions.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "stores/store_health.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::stores {

struct StoreOptions;

struct SharedSessionState {
    std::string id;
    std::string principal;  // the credential's digest that created it ("" without auth)
    std::string view;       // the gateway profile / URL it was created on
    std::string revision;   // negotiated protocol revision
    nlohmann::json client_capabilities = nlohmann::json::object();
    nlohmann::json client_info = nlohmann::json::object();
    std::string log_level;                   // "debug" ... "emergency"
    std::vector<std::string> subscriptions;  // resource URIs

    std::string to_json_text() const;
    // nullopt for text that is not such a record (a foreign or older writer).
    static std::optional<SharedSessionState> from_json_text(std::string_view text);
};

struct SessionBusMessage {
    enum class Kind { changed, ended, event, stream, relay, task };
    Kind kind = Kind::changed;
    std::string origin;        // the replica that sent it (SharedSessions::replica())
    std::string session_id;    // task: the task id
    std::uint64_t seq = 0;     // event, stream: its number in its stream (stream: 0 = the stream ended)
    std::string data;          // changed: the state as JSON; event, relay: the message; task: the answers
    std::uint64_t stream = 0;  // stream: which response stream

    std::string encode() const;
    static std::optional<SessionBusMessage> decode(std::string_view text);
};

struct SessionEvent {
    std::uint64_t seq = 0;
    std::string data;
};

// A replica another announcement (or this one's) said is alive.
struct ReplicaSeen {
    std::string id;           // as it announced itself (host:pid)
    std::string info;         // the JSON text it announced
    std::int64_t age_ms = 0;  // since its last announcement, by Redis's clock
};

class SharedSessions {
public:
    virtual ~SharedSessions() = default;

    // This process's name on the bus (random per start), so it can skip its own messages.
    virtual const std::string& replica() const = 0;
    // Both connections (commands and the subscription) are up.
    virtual bool ready() const = 0;
    virtual StoreState state() const = 0;
    // Counts the times the subscription (re)started: messages sent meanwhile were missed.
    virtual std::uint64_t subscriptions_started() const = 0;

    // Writes the state (expiring `ttl` from now) and announces it ("changed"). Throws
    // RedisUnavailable when Redis is away.
    virtual Task<void> save(SharedSessionState state, std::chrono::milliseconds ttl) = 0;
    virtual Task<std::optional<SharedSessionState>> load(std::string id) = 0;
    // Pushes the expiry of the state and of the event log `ttl` from now.
    virtual Task<void> touch(std::string id, std::chrono::milliseconds ttl) = 0;
    // Deletes the state and its event log and announces "ended".
    virtual Task<void> remove(std::string id) = 0;
    // Numbers `data` in the session's event log (keeping the newest `max_events`) and
    // announces it ("event"); returns its number.
    virtual Task<std::uint64_t> publish_event(std::string id, std::string data, std::size_t max_events,
                                              std::chrono::milliseconds ttl) = 0;
    // The logged events numbered above `after`, oldest first.
    virtual Task<std::vector<SessionEvent>> events_after(std::string id, std::uint64_t after) = 0;

    // A POST's response stream, mirrored so a client can resume it on any replica: logs the
    // event `seq` of stream `stream` (keeping the newest `max_events`; seq 0: the stream
    // ended) and announces it ("stream").
    virtual Task<void> publish_stream_event(std::string id, std::uint64_t stream, std::uint64_t seq, std::string data,
                                            std::size_t max_events, std::chrono::milliseconds ttl) = 0;
    struct StreamLog {
        std::vector<SessionEvent> events;  // numbered above the `after` asked for, oldest first
        bool ended = false;
        bool exists = false;  // some replica mirrored this stream (and it has not expired)
    };
    virtual Task<StreamLog> stream_events_after(std::string id, std::uint64_t stream, std::uint64_t after) = 0;

    // Hands a client's message (JSON-RPC text) to every replica holding the session; the one
    // it is for takes it ("relay").
    virtual Task<void> relay_client_message(std::string session_id, std::string message) = 0;
    // Sends a client's answers (inputResponses, as JSON) to the replica that runs the task.
    virtual Task<void> publish_task_answers(std::string task_id, std::string responses) = 0;

    // Announces this replica as `id` with `info` (JSON text) now, forgets every replica
    // silent for longer than `forget_after`, and returns the others still remembered and this
    // one: the replicas seen. One script, timed by Redis's clock, so replicas whose clocks
    // differ still agree on who is silent. Throws RedisUnavailable when Redis is away.
    virtual Task<std::vector<ReplicaSeen>> announce_replica(std::string id, std::string info,
                                                            std::chrono::milliseconds forget_after) = 0;

    // Closes both connections now, while the event loop still exists (their sockets belong
    // to it); every call after this throws RedisUnavailable. The process is stopping.
    virtual void shutdown() = 0;

    // Every bus message, this replica's own included, on the loop: the sessions' to
    // `listener`, the tasks' to `task_listener`.
    virtual void set_listener(std::function<void(SessionBusMessage)> listener) = 0;
    virtual void set_task_listener(std::function<void(std::string task_id, std::string responses)> listener) = 0;
};

// Sessions shared through the Redis at options.url (keys under options.key_prefix).
std::unique_ptr<SharedSessions> make_redis_shared_sessions(const StoreOptions& options, AsioExecutor& executor);

}  // namespace toolport::stores
