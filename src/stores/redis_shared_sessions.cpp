// SharedSessions over Redis. Keys, under the store's prefix:
//   session:<id>          the state (JSON), expiring after the idle timeout
//   session:<id>:seq      the last GET-stream event number (INCR)
//   session:<id>:events   the event log: a sorted set scored by number, member "<n>:<data>"
//   replicas              a hash: replica id -> "<ms of its last announcement> <its info>"
// and one pub/sub channel, <prefix>sessions, for every session's bus messages. Each change
// and its announcement are one Lua script, so a replica never sees an announcement of
// state that is not written yet, and event numbers follow publication order.
#include "stores/shared_sessions.hpp"

#include <charconv>

#include <spdlog/spdlog.h>

#include "stores/redis_client.hpp"
#include "stores/redis_script.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"
#include "util/random.hpp"

namespace toolport::stores {

namespace {

// KEYS: state. ARGV: state JSON, ttl ms, channel, announcement.
constexpr const char* kSaveScript = R"lua(
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
)lua";

// KEYS: state, seq, events. ARGV: channel, announcement.
constexpr const char* kRemoveScript = R"lua(
local n = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return n
)lua";

// KEYS: state, seq, events. ARGV: ttl ms.
constexpr const char* kTouchScript = R"lua(
local alive = redis.call('PEXPIRE', KEYS[1], ARGV[1])
if alive == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[1])
end
return alive
)lua";

// KEYS: seq, events. ARGV: data, max events, ttl ms, channel, announcement head
// ("event <origin> <session> "): the number and the data are appended here.
constexpr const char* kEventScript = R"lua(
local n = redis.call('INCR', KEYS[1])
redis.call('ZADD', KEYS[2], n, n .. ':' .. ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[2]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5] .. n .. ' ' .. ARGV[1])
return n
)lua";

// KEYS: the stream's log. ARGV: seq (0: the stream ended), data, max events, ttl ms,
// channel, announcement. The end marker scores above every event, so trimming keeps it.
constexpr const char* kStreamEventScript = R"lua(
if ARGV[1] == '0' then
  redis.call('ZADD', KEYS[1], 9007199254740991, 'end:')
else
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':' .. ARGV[2])
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[3]) + 2))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
)lua";

// KEYS: replicas. ARGV: this replica's id, its info, forget after (ms). Returns a flat
// array of id, age (ms), info for every replica announced within the window. The hash
// expires with the window, so it is gone once every replica is.
constexpr const char* kAnnounceReplicaScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], now .. ' ' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], window)
local all = redis.call('HGETALL', KEYS[1])
local seen = {}
for i = 1, #all, 2 do
  local space = string.find(all[i + 1], ' ', 1, true)
  local at = space and tonumber(string.sub(all[i + 1], 1, space - 1))
  if not at or now - at > window then
    redis.call('HDEL', KEYS[1], all[i])
  else
    seen[#seen + 1] = all[i]
    seen[#seen + 1] = tostring(now - at)
    seen[#seen + 1] = string.sub(all[i + 1], space + 1)
  end
end
return seen
)lua";

// An event log member, "<n>:<data>" (the number keeps equal messages apart in the set).
std::optional<SessionEvent> logged_event(const std::string& member) {
    auto colon = member.find(':');
    if (colon == std::string::npos) return std::nullopt;
    SessionEvent e;
    auto r = std::from_chars(member.data(), member.data() + colon, e.seq);
    if (r.ec != std::errc() || r.ptr != member.data() + colon) return std::nullopt;
    e.data = member.substr(colon + 1);
    return e;
}

class RedisSharedSessions final : public SharedSessions {
public:
    RedisSharedSessions(const StoreOptions& options, AsioExecutor& executor)
        : prefix_(options.key_prefix),
          channel_(options.key_prefix + "sessions"),
          replica_(util::random_hex(8)),
          save_(kSaveScript),
          remove_(kRemoveScript),
          touch_(kTouchScript),
          event_(kEventScript),
          stream_event_(kStreamEventScript),
          announce_replica_(kAnnounceReplicaScript) {
        auto endpoint = parse_redis_url(options.url);
        commands_ = std::make_unique<RedisClient>(
            executor, RedisClient::Options{endpoint, options.redis_timeout, options.reconnect_interval, {}, {}});
        RedisClient::Options sub{endpoint, options.redis_timeout, options.reconnect_interval, {channel_}, {}};
        sub.on_message = [this](std::string, std::string payload) {
            auto message = SessionBusMessage::decode(payload);
            if (!message) {
                spdlog::debug("shared sessions: ignored a bus message of an unknown form");
                return;
            }
            if (message->kind == SessionBusMessage::Kind::task) {
                if (task_listener_) task_listener_(std::move(message->session_id), std::move(message->data));
            } else if (listener_) {
                listener_(std::move(*message));
            }
        };
        subscriber_ = std::make_unique<RedisClient>(executor, std::move(sub));
        commands_->start();
        subscriber_->start();
    }

    const std::string& replica() const override { return replica_; }
    bool ready() const override { return commands_ && subscriber_ && commands_->ready() && subscriber_->ready(); }
    StoreState state() const override { return ready() ? StoreState::available : StoreState::degraded; }
    std::uint64_t subscriptions_started() const override { return subscriber_ ? subscriber_->connections() : 0; }

    void shutdown() override {
        subscriber_.reset();
        commands_.reset();
    }

    Task<void> save(SharedSessionState state, std::chrono::milliseconds ttl) override {
        SessionBusMessage m{SessionBusMessage::Kind::changed, replica_, state.id, 0, state.to_json_text()};
        auto reply = co_await save_.run(commands(), {key(state.id)},
                                        {m.data, std::to_string(ttl.count()), channel_, m.encode()});
        if (reply.is_error()) throw RedisUnavailable("saving the session failed: " + reply.text);
    }

    Task<std::optional<SharedSessionState>> load(std::string id) override {
        auto reply = co_await commands().command({"GET", key(id)});
        if (!reply.is_string()) co_return std::nullopt;
        auto state = SharedSessionState::from_json_text(reply.text);
        if (state && state->id != id) co_return std::nullopt;
        co_return state;
    }

    Task<void> touch(std::string id, std::chrono::milliseconds ttl) override {
        auto reply = co_await touch_.run(commands(), {key(id), key(id) + ":seq", key(id) + ":events"},
                                         {std::to_string(ttl.count())});
        if (reply.is_error()) throw RedisUnavailable("touching the session failed: " + reply.text);
    }

    Task<void> remove(std::string id) override {
        SessionBusMessage m{SessionBusMessage::Kind::ended, replica_, id, 0, {}};
        auto reply = co_await remove_.run(commands(), {key(id), key(id) + ":seq", key(id) + ":events"},
                                          {channel_, m.encode()});
        if (reply.is_error()) throw RedisUnavailable("ending the session failed: " + reply.text);
    }

    Task<std::uint64_t> publish_event(std::string id, std::string data, std::size_t max_events,
                                      std::chrono::milliseconds ttl) override {
        std::string head = "event " + replica_ + " " + id + " ";
        auto reply = co_await event_.run(commands(), {key(id) + ":seq", key(id) + ":events"},
                                         {std::move(data), std::to_string(std::max<std::size_t>(max_events, 1)),
                                          std::to_string(ttl.count()), channel_, std::move(head)});
        if (!reply.is_integer()) throw RedisUnavailable("publishing the event failed: " + reply.text);
        co_return static_cast<std::uint64_t>(reply.integer);
    }

    Task<std::vector<SessionEvent>> events_after(std::string id, std::uint64_t after) override {
        auto reply = co_await commands().command(
            {"ZRANGEBYSCORE", key(id) + ":events", "(" + std::to_string(after), "+inf"});
        std::vector<SessionEvent> events;
        if (!reply.is_array()) co_return events;
        for (const auto& element : reply.elements) {
            if (auto e = logged_event(element.text)) events.push_back(std::move(*e));
        }
        co_return events;
    }

    Task<void> publish_stream_event(std::string id, std::uint64_t stream, std::uint64_t seq, std::string data,
                                    std::size_t max_events, std::chrono::milliseconds ttl) override {
        SessionBusMessage m{SessionBusMessage::Kind::stream, replica_, id, seq, data};
        m.stream = stream;
        auto reply = co_await stream_event_.run(commands(), {stream_key(id, stream)},
                                                {std::to_string(seq), std::move(data),
                                                 std::to_string(std::max<std::size_t>(max_events, 1)),
                                                 std::to_string(ttl.count()), channel_, m.encode()});
        if (reply.is_error()) throw RedisUnavailable("mirroring the stream failed: " + reply.text);
    }

    Task<StreamLog> stream_events_after(std::string id, std::uint64_t stream, std::uint64_t after) override {
        auto reply = co_await commands().command(
            {"ZRANGEBYSCORE", stream_key(id, stream), "(" + std::to_string(after), "+inf"});
        StreamLog log;
        if (!reply.is_array()) co_return log;
        if (reply.elements.empty()) {
            auto exists = co_await commands().command({"EXISTS", stream_key(id, stream)});
            log.exists = exists.is_integer() && exists.integer == 1;
            co_return log;
        }
        log.exists = true;
        for (const auto& element : reply.elements) {
            if (element.text == "end:") log.ended = true;
            else if (auto e = logged_event(element.text)) log.events.push_back(std::move(*e));
        }
        co_return log;
    }

    Task<void> relay_client_message(std::string session_id, std::string message) override {
        SessionBusMessage m{SessionBusMessage::Kind::relay, replica_, std::move(session_id), 0, std::move(message)};
        auto reply = co_await commands().command({"PUBLISH", channel_, m.encode()});
        if (reply.is_error()) throw RedisUnavailable("relaying the message failed: " + reply.text);
    }

    Task<void> publish_task_answers(std::string task_id, std::string responses) override {
        SessionBusMessage m{SessionBusMessage::Kind::task, replica_, std::move(task_id), 0, std::move(responses)};
        auto reply = co_await commands().command({"PUBLISH", channel_, m.encode()});
        if (reply.is_error()) throw RedisUnavailable("relaying the answers failed: " + reply.text);
    }

    Task<std::vector<ReplicaSeen>> announce_replica(std::string id, std::string info,
                                                    std::chrono::milliseconds forget_after) override {
        auto reply = co_await announce_replica_.run(commands(), {prefix_ + "replicas"},
                                                    {std::move(id), std::move(info),
                                                     std::to_string(std::max<std::int64_t>(forget_after.count(), 1))});
        if (!reply.is_array()) throw RedisUnavailable("announcing the replica failed: " + reply.text);
        std::vector<ReplicaSeen> seen;
        for (std::size_t i = 0; i + 3 <= reply.elements.size(); i += 3) {
            ReplicaSeen r{reply.elements[i].text, reply.elements[i + 2].text, 0};
            std::from_chars(reply.elements[i + 1].text.data(),
                            reply.elements[i + 1].text.data() + reply.elements[i + 1].text.size(), r.age_ms);
            seen.push_back(std::move(r));
        }
        co_return seen;
    }

    void set_listener(std::function<void(SessionBusMessage)> listener) override { listener_ = std::move(listener); }
    void set_task_listener(std::function<void(std::string, std::string)> listener) override {
        task_listener_ = std::move(listener);
    }

private:
    std::string key(const std::string& id) const { return prefix_ + "session:" + id; }
    // The command connection; RedisUnavailable once shut down.
    RedisClient& commands() const {
        if (!commands_) throw RedisUnavailable("shared sessions stopped");
        return *commands_;
    }
    std::string stream_key(const std::string& id, std::uint64_t stream) const {
        return key(id) + ":stream:" + std::to_string(stream);
    }

    std::string prefix_;
    std::string channel_;
    std::string replica_;
    RedisScript save_, remove_, touch_, event_, stream_event_, announce_replica_;
    std::function<void(SessionBusMessage)> listener_;
    std::function<void(std::string, std::string)> task_listener_;
    std::unique_ptr<RedisClient> commands_;
    std::unique_ptr<RedisClient> subscriber_;
};

}  // namespace

std::unique_ptr<SharedSessions> make_redis_shared_sessions(const StoreOptions& options, AsioExecutor& executor) {
    return std::make_unique<RedisSharedSessions>(options, executor);
}

}  // namespace toolport::stores
