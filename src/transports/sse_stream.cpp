#include "transports/sse_stream.hpp"

#include <charconv>

#include "server/session.hpp"

namespace toolport {

void OutStream::push(std::string data, const std::string* reply_to) {
    StreamEvent e{next_seq_++, std::move(data), reply_to != nullptr};
    if (!e.is_response) has_non_response_ = true;
    bytes_ += e.data.size();
    events_.push_back(std::move(e));
    while (events_.size() > 1 && (events_.size() > max_events_ || bytes_ > max_bytes_)) {
        bytes_ -= events_.front().data.size();
        events_.pop_front();
    }
    if (reply_to) {
        pending_.erase(*reply_to);
        if (pending_.empty()) {
            finished_ = true;
            finished_at = std::chrono::steady_clock::now();
        }
    }
    notify();
}

std::deque<StreamEvent> OutStream::events_after(std::uint64_t seq, bool* complete) const {
    std::deque<StreamEvent> out;
    if (complete) *complete = can_replay_after(seq);
    for (const auto& e : events_) {
        if (e.seq > seq) out.push_back(e);
    }
    return out;
}

std::shared_ptr<OutStream> HttpSession::open_stream(const std::vector<std::string>& request_keys) {
    auto s = std::make_shared<OutStream>(next_stream_++, max_events_, max_bytes_);
    for (const auto& key : request_keys) {
        s->expect_reply(key);
        by_request_[key] = s;
    }
    streams_.emplace(s->id(), s);
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

void HttpSession::route(const protocol::Json& message, const protocol::RequestId* related) {
    std::shared_ptr<OutStream> stream;
    std::string key;
    const bool is_reply = !message.contains("method");
    if (related && !legacy) {
        key = related->dump();
        if (auto it = by_request_.find(key); it != by_request_.end()) stream = it->second;
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

void HttpSession::close_stream(const protocol::RequestId& request) {
    if (auto it = by_request_.find(request.dump()); it != by_request_.end()) it->second->request_close();
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
