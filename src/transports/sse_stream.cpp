#include "transports/sse_stream.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "server/session.hpp"
#include "util/json.hpp"

namespace toolport {

std::string cancelled_reply(const protocol::RequestId& id, const std::string& reason) {
    return protocol::serialize(
        protocol::make_error(id, protocol::error_code::kRequestCancelled, "Request cancelled: " + reason));
}

namespace {
std::string session_ended_reply(const protocol::RequestId& id, const std::string& reason) {
    return protocol::serialize(
        protocol::make_error(id, protocol::error_code::kInvalidRequest,
                             "Session ended: " + reason +
                                 "; the request was cancelled (initialize a new session to go on)"));
}
}  // namespace

void OutStream::set_mirror(Mirror mirror) {
    mirror_ = std::move(mirror);
    for (const auto& e : events_) mirror_(e.seq, e.data);
    if (finished_) mirror_(0, std::string());
}

void OutStream::push(std::string data, const std::string* reply_to) {
    StreamEvent e{next_seq_++, std::move(data), reply_to != nullptr, reply_to ? *reply_to : std::string(), false};
    if (!e.is_response) has_non_response_ = true;
    if (mirror_) mirror_(e.seq, e.data);
    bytes_ += e.data.size();
    events_.push_back(std::move(e));
    evict_over_limits();
    if (reply_to) {
        pending_.erase(*reply_to);
        check_finished();
    }
    notify();
}

void OutStream::push_numbered(std::uint64_t seq, std::string data) {
    if (seq < next_seq_) return;
    next_seq_ = seq;
    push(std::move(data), nullptr);
}

void OutStream::push_local_reply(std::string data) {
    if (mirror_) mirror_(next_seq_, data);
    bytes_ += data.size();
    events_.push_back(StreamEvent{next_seq_++, std::move(data), true, std::string(), true});
    evict_over_limits();
    notify();
}

void OutStream::end_request(const std::string& request_key, std::string error_reply) {
    if (pending_.erase(request_key) == 0) return;
    unanswered_.push_back(std::move(error_reply));
    check_finished();
    notify();
}

void OutStream::end() {
    pending_.clear();
    ended_ = true;
    check_finished();
    notify();
}

void OutStream::check_finished() {
    if (finished_ || !pending_.empty()) return;
    finished_ = true;
    finished_at = std::chrono::steady_clock::now();
    if (mirror_) mirror_(0, std::string());
}

// The log is bounded so that a client that never reads cannot make the server hold without
// limit. Notifications and delivered events go first, oldest first; a reply not yet
// delivered is never dropped (a POST's replies are its own): past the byte limit it is
// replaced by a short error for its request instead.
void OutStream::evict_over_limits() {
    auto may_go = [this](const StreamEvent& e) { return !e.is_response || e.seq <= delivered_; };
    auto undelivered_replies = [this] {
        std::size_t n = 0;
        for (const auto& e : events_) n += (e.is_response && e.seq > delivered_) ? 1 : 0;
        return n;
    };
    while (events_.size() > 1 && (bytes_ > max_bytes_ || events_.size() > max_events_)) {
        auto newest = events_.end() - 1;  // always kept as it is
        auto victim = std::find_if(events_.begin(), newest, may_go);
        if (victim != newest) {
            bytes_ -= victim->data.size();
            events_.erase(victim);
            continue;
        }
        if (bytes_ <= max_bytes_ && events_.size() - undelivered_replies() <= max_events_) return;
        auto big = std::find_if(events_.begin(), newest, [](const StreamEvent& e) { return !e.shrunk; });
        if (big == newest) return;
        std::string error = fmt::format(
            R"({{"error":{{"code":{},"message":"Reply dropped: this response's replies passed http.max_replay_bytes ({} bytes) before the client read them; send the request again on its own, or raise the limit"}},"id":{},"jsonrpc":"2.0"}})",
            protocol::error_code::kInternalError, max_bytes_, big->reply_to.empty() ? "null" : big->reply_to);
        big->shrunk = true;
        if (big->data.size() <= error.size()) continue;  // already as small as its error
        bytes_ = bytes_ - big->data.size() + error.size();
        big->data = std::move(error);
    }
}

std::string OutStream::take_json_body(bool batch) {
    if (!batch) {
        return events_.empty() ? std::move(unanswered_.front()) : std::move(events_.front().data);
    }
    std::size_t size = 2;
    for (const auto& e : events_) size += e.data.size() + 1;
    for (const auto& u : unanswered_) size += u.size() + 1;
    std::string body;
    body.reserve(size);
    body += '[';
    auto append = [&body](std::string& reply) {
        if (body.size() > 1) body += ',';
        body += reply;
    };
    for (auto& e : events_) append(e.data);
    for (auto& u : unanswered_) append(u);
    body += ']';
    return body;
}

std::shared_ptr<OutStream> HttpSession::open_stream(const std::vector<protocol::RequestId>& request_ids) {
    auto s = std::make_shared<OutStream>(next_stream_++, max_events_, max_bytes_);
    for (const auto& id : request_ids) {
        auto key = protocol::id_key(id);
        s->expect_reply(key);
        by_request_[key] = AwaitedReply{s, id};
    }
    streams_.emplace(s->id(), s);
    return s;
}

std::shared_ptr<OutStream> HttpSession::resume_remote_stream(std::uint64_t id, std::uint64_t after) {
    auto s = std::make_shared<OutStream>(id, max_events_, max_bytes_);
    s->start_after(after);
    streams_[id] = s;
    remote_streams[id] = RemoteStream{};
    return s;
}

std::shared_ptr<OutStream> HttpSession::standalone() {
    if (!standalone_) standalone_ = std::make_shared<OutStream>(0, max_events_, max_bytes_);
    return standalone_;
}

std::shared_ptr<OutStream> HttpSession::find_stream(std::uint64_t id) const {
    if (id == 0) return standalone_;
    auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : it->second;
}

void HttpSession::route(const Json& message, const protocol::RequestId* related) {
    std::shared_ptr<OutStream> stream;
    std::string key;
    const bool is_reply = !message.contains("method");
    if (related && !legacy) {
        key = protocol::id_key(*related);
        if (auto it = by_request_.find(key); it != by_request_.end()) stream = it->second.stream;
    }
    if (!stream && standalone_sink) {
        standalone_sink(protocol::serialize(message));
        return;
    }
    if (!stream) stream = standalone();
    auto data = protocol::serialize(message);
    if (is_reply && related && stream->id() != 0) {
        by_request_.erase(key);
        stream->push(std::move(data), &key);
    } else {
        stream->push(std::move(data), nullptr);
    }
}

void HttpSession::request_ended(const protocol::RequestId& id, const std::string& reason) {
    auto key = protocol::id_key(id);
    auto it = by_request_.find(key);
    if (it == by_request_.end()) return;
    auto stream = std::move(it->second.stream);
    by_request_.erase(it);
    stream->end_request(key, cancelled_reply(id, reason));
}

void HttpSession::end(const std::string& reason) {
    auto awaited = std::move(by_request_);
    by_request_.clear();
    for (auto& [key, entry] : awaited) entry.stream->end_request(key, session_ended_reply(entry.id, reason));
    for (auto& [id, stream] : streams_) stream->end();
    if (standalone_) standalone_->end();
}

void HttpSession::close_stream(const protocol::RequestId& request) {
    if (auto it = by_request_.find(protocol::id_key(request)); it != by_request_.end())
        it->second.stream->request_close();
}

void HttpSession::prune(std::chrono::steady_clock::duration keep) {
    auto now = std::chrono::steady_clock::now();
    for (auto it = streams_.begin(); it != streams_.end();) {
        const auto& s = it->second;
        if (s->finished() && !s->attached() && now - s->finished_at > keep) it = streams_.erase(it);
        else ++it;
    }
}

bool HttpSession::busy() const {
    if (standalone_ && standalone_->attached()) return true;
    for (const auto& [id, s] : streams_) {
        if (s->attached() || !s->finished()) return true;
    }
    return mcp && mcp->in_flight() > 0;
}

bool HttpSession::parse_event_id(std::string_view text, std::uint64_t* stream, std::uint64_t* seq) {
    auto dash = text.find('-');
    if (dash == std::string_view::npos) return false;
    auto a = text.substr(0, dash), b = text.substr(dash + 1);
    auto r1 = std::from_chars(a.data(), a.data() + a.size(), *stream);
    auto r2 = std::from_chars(b.data(), b.data() + b.size(), *seq);
    return r1.ec == std::errc() && r1.ptr == a.data() + a.size() && r2.ec == std::errc() &&
           r2.ptr == b.data() + b.size();
}

}  // namespace toolport
