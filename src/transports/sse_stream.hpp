// The server side of Streamable HTTP, minus the sockets: response streams, their event
// logs for resumption, and the routing of a session's outgoing messages onto them.
//
// Every POST that carries requests gets an OutStream; the replies, progress, logs and
// nested client requests of those requests go there. Messages that belong to no request
// go to the session's standalone stream (the GET stream). Each stream numbers its events
// so a client that lost the connection can resume with Last-Event-ID ("<stream>-<seq>").
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "util/json.hpp"

namespace toolport {

class ServerSession;

// The error a POST gets in place of the reply its cancelled request will never have.
std::string cancelled_reply(const protocol::RequestId& id, const std::string& reason);

struct StreamEvent {
    std::uint64_t seq = 0;
    std::string data;  // one serialized JSON-RPC message
    bool is_response = false;
    std::string reply_to;  // a response's request id, as JSON text ("" for local replies)
    bool shrunk = false;   // a response replaced by a short error to bound the log (see push)
};

class OutStream {
public:
    // The event log keeps at most `max_events` events and `max_bytes` of data (the newest
    // event is always kept), so a client that never reads cannot make the server buffer
    // without bound; it can only lose the oldest events of its resumption window. Replies
    // not yet delivered are never dropped: they do not count against `max_events`, and when
    // they alone pass `max_bytes` the oldest are replaced by a short error for their request
    // (so every request of a POST is still answered, and memory stays bounded).
    OutStream(std::uint64_t id, std::size_t max_events, std::size_t max_bytes = 8 * 1024 * 1024)
        : id_(id), max_events_(max_events), max_bytes_(max_bytes) {}

    std::uint64_t id() const { return id_; }
    void expect_reply(const std::string& request_key) { pending_.insert(request_key); }
    std::size_t expected_replies() const { return pending_.size(); }

    // Appends a message; `reply_to` is set when the message answers one of the requests.
    void push(std::string data, const std::string* reply_to);
    // Appends a message numbered elsewhere (a shared session's GET-stream event, numbered
    // by Redis): ignored when not newer than the last event; later numbers follow it.
    void push_numbered(std::uint64_t seq, std::string data);
    // An empty stream's next event is numbered after `seq`.
    void start_after(std::uint64_t seq) {
        if (events_.empty()) next_seq_ = std::max(next_seq_, seq + 1);
    }
    // Appends a reply the transport itself makes (to a malformed or duplicate member of a
    // batch): a response, but to no request the session runs.
    void push_local_reply(std::string data);
    // The request `request_key` ended without a reply (cancelled, or its session ended).
    // Over an event stream nothing is sent for it; a response still to be written as JSON
    // carries `error_reply` in its place, so the POST is answered all the same.
    void end_request(const std::string& request_key, std::string error_reply);
    // The session ended: nothing more will be pushed (end_request() its requests first); a
    // connection writing the stream ends it.
    void end();
    bool ended() const { return ended_; }

    // All requests answered (or ended): nothing more will be pushed.
    bool finished() const { return finished_; }
    // SSE polling: the server ends the HTTP response early; the client resumes the stream
    // with GET + Last-Event-ID while the requests go on.
    void request_close() {
        close_requested_ = true;
        notify();
    }
    bool take_close_request() { return std::exchange(close_requested_, false); }
    bool close_requested() const { return close_requested_; }

    const std::deque<StreamEvent>& events() const { return events_; }
    // The body of a stream answered as plain JSON, once finished with nothing but replies:
    // the one reply, or for a batch the array of every reply (moved out: nothing else reads
    // them). Replies are never dropped from the log before they are delivered.
    std::string take_json_body(bool batch);
    // Writers record how far the client has been sent the stream.
    void mark_delivered(std::uint64_t seq) { delivered_ = std::max(delivered_, seq); }
    // Everything said and sent: nobody can need to resume this stream.
    bool fully_delivered() const { return finished_ && delivered_ >= last_seq(); }
    std::uint64_t last_seq() const { return next_seq_ - 1; }
    // False when events after `seq` were already dropped from the log (a resume would skip them).
    bool can_replay_after(std::uint64_t seq) const { return events_.empty() || events_.front().seq <= seq + 1; }
    bool has_non_response() const { return has_non_response_; }

    // A shared session's response stream is mirrored to Redis once it is an event stream,
    // so a client can resume it on another replica: `mirror` is called with every event
    // (those already logged first) and, once the stream is finished, with seq 0.
    using Mirror = std::function<void(std::uint64_t seq, const std::string& data)>;
    void set_mirror(Mirror mirror);
    bool mirrored() const { return static_cast<bool>(mirror_); }

    // The connection writing this stream, if any, wants to know about new events.
    void set_waker(std::function<void()> waker) { waker_ = std::move(waker); }
    void clear_waker() { waker_ = nullptr; }
    bool attached() const { return static_cast<bool>(waker_); }
    void notify() {
        if (waker_) waker_();
    }

    std::chrono::steady_clock::time_point finished_at;

private:
    std::uint64_t id_;
    std::size_t max_events_;
    std::size_t max_bytes_;
    std::size_t bytes_ = 0;
    std::uint64_t next_seq_ = 1;
    void evict_over_limits();
    void check_finished();

    std::deque<StreamEvent> events_;
    std::unordered_set<std::string> pending_;
    std::vector<std::string> unanswered_;  // error replies for requests that ended without one
    bool finished_ = false;
    bool ended_ = false;
    bool has_non_response_ = false;
    bool close_requested_ = false;
    std::uint64_t delivered_ = 0;
    std::function<void()> waker_;
    Mirror mirror_;
};

// One Streamable HTTP (or legacy SSE) session: the MCP session plus its streams.
class HttpSession {
public:
    HttpSession(std::string id, std::size_t max_events, std::size_t max_bytes = 8 * 1024 * 1024)
        : id_(std::move(id)), max_events_(max_events), max_bytes_(max_bytes) {}

    const std::string& id() const { return id_; }
    std::shared_ptr<ServerSession> mcp;
    bool legacy = false;  // HTTP+SSE (2024-11-05): every message goes on the one stream
    // Who created the session (http_policy::principal_of); only that caller may use it.
    std::string principal;
    // The view (gateway profile) of the URL it was created on: only that URL reaches it.
    std::string view;
    // Shared with the other replicas (HttpOptions::shared_sessions): its state is in Redis
    // (`dirty` while a change could not be written), and its standalone messages go to
    // `standalone_sink` (the bus), which brings them back to whichever replica holds the GET
    // stream. While that stream catches up from the event log, live events wait in `held`.
    bool shared = false;
    bool dirty = false;
    std::chrono::steady_clock::time_point touched = std::chrono::steady_clock::now();  // last written to Redis
    std::function<void(std::string data)> standalone_sink;
    bool catching_up = false;
    std::vector<std::pair<std::uint64_t, std::string>> held;
    bool has_standalone() const { return static_cast<bool>(standalone_); }
    // A new, empty standalone stream whose events follow `after` (a shared session's GET
    // stream resumed here: the event log in Redis fills it).
    void fresh_standalone(std::uint64_t after) {
        if (standalone_) standalone_->end();
        standalone_ = std::make_shared<OutStream>(0, max_events_, max_bytes_);
        standalone_->start_after(after);
    }
    std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_active = created;
    // The client came back after initialize (another request, a stream): the handshake is
    // over. Sessions that never get here are dropped after a short handshake timeout.
    bool established = false;

    // A new stream for the requests of one POST.
    std::shared_ptr<OutStream> open_stream(const std::vector<protocol::RequestId>& request_ids);
    // Shared sessions: this replica numbers its streams after `base` (its own range), and
    // takes over a stream another replica opened, to resume it here: empty, its events
    // following `after` (the event log in Redis fills it).
    void number_streams_after(std::uint64_t base) { next_stream_ = std::max(next_stream_, base + 1); }
    std::shared_ptr<OutStream> resume_remote_stream(std::uint64_t id, std::uint64_t after);
    // Remote streams catching up from the log hold their live events here meanwhile.
    struct RemoteStream {
        bool catching_up = true;
        std::vector<std::pair<std::uint64_t, std::string>> held;
    };
    std::unordered_map<std::uint64_t, RemoteStream> remote_streams;
    // A request with this key (its id as JSON text) still waits for its reply.
    bool awaits_reply(const std::string& request_key) const { return by_request_.count(request_key) > 0; }
    // The request `id` ended without a reply (SessionOutput's companion, see
    // ServerSession::set_unanswered_listener).
    void request_ended(const protocol::RequestId& id, const std::string& reason);
    // The session ended (deleted, expired, server stopping): every response still open ends
    // with an error naming `reason`, and every stream ends.
    void end(const std::string& reason);
    // The standalone stream (created on first use, so early notifications are kept).
    std::shared_ptr<OutStream> standalone();
    std::shared_ptr<OutStream> find_stream(std::uint64_t id) const;
    // Forgets a request stream once it is fully delivered (keeps the session small).
    void drop_stream(std::uint64_t id) { streams_.erase(id); }

    // Ends the HTTP response carrying `request`'s stream (see OutStream::request_close).
    void close_stream(const protocol::RequestId& request);

    // SessionOutput: puts `message` on the right stream.
    void route(const Json& message, const protocol::RequestId* related);

    // Drops finished streams that nobody is reading and that are older than `keep`.
    void prune(std::chrono::steady_clock::duration keep);
    bool busy() const;

    // "<stream>-<seq>" parsing for Last-Event-ID.
    static bool parse_event_id(std::string_view text, std::uint64_t* stream, std::uint64_t* seq);

private:
    std::string id_;
    std::size_t max_events_;
    std::size_t max_bytes_;
    std::uint64_t next_stream_ = 1;  // 0 is the standalone stream
    std::unordered_map<std::uint64_t, std::shared_ptr<OutStream>> streams_;
    struct AwaitedReply {
        std::shared_ptr<OutStream> stream;
        protocol::RequestId id;
    };
    std::unordered_map<std::string, AwaitedReply> by_request_;  // key: the id as JSON text
    std::shared_ptr<OutStream> standalone_;
};

}  // namespace toolport
