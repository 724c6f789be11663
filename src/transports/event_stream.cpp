#include "transports/event_stream.hpp"

#include <fmt/format.h>

#include "transports/sse_stream.hpp"

namespace toolport {

void append_chunk(std::string& out, std::string_view data) {
    if (data.empty()) return;  // an empty chunk would end the body
    out += fmt::format("{:x}\r\n", data.size());
    out += data;
    out += "\r\n";
}

EventStream::EventStream(std::shared_ptr<OutStream> out, unsigned version, EventStreamSettings settings,
                         std::function<void()> on_end)
    : out_(std::move(out)), version_(version), settings_(std::move(settings)), on_end_(std::move(on_end)) {
    sent_ = settings_.after_seq;
    out_->set_waker([] {});
}

EventStream::~EventStream() { finish(); }

std::string EventStream::head() const {
    std::string head = version_ == 10 ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.1 200 OK\r\n";
    head += "Content-Type: text/event-stream\r\nCache-Control: " + settings_.cache_control +
            "\r\nX-Accel-Buffering: no\r\n";
    if (!settings_.session_id.empty()) head += "Mcp-Session-Id: " + settings_.session_id + "\r\n";
    for (const auto& [name, value] : settings_.headers) head += name + ": " + value + "\r\n";
    if (version_ != 10) head += "Connection: close\r\n";
    head += "Transfer-Encoding: chunked\r\n\r\n";
    return head;
}

EventStream::Step EventStream::next(std::string& chunk) {
    std::string data;
    if (!primed_) {
        primed_ = true;
        data = std::move(settings_.prelude);
        if (settings_.resumable && settings_.after_seq == 0) {
            // Priming event: an id to resume from before anything else is said, and how
            // soon to come back if the server closes the stream (SEP-1699).
            data += fmt::format("id: {}-0\nretry: {}\ndata: \n\n", out_->id(), settings_.retry.count());
        }
    }
    for (const auto& e : out_->events()) {
        if (e.seq <= sent_) continue;
        if (settings_.preformatted) {
            data += e.data;
            sent_ = e.seq;
            continue;
        }
        if (settings_.resumable) data += fmt::format("id: {}-{}\n", out_->id(), e.seq);
        data += "event: message\ndata: ";
        data += e.data;
        data += "\n\n";
        sent_ = e.seq;
    }
    append_chunk(chunk, data);
    if (out_->finished() && sent_ >= out_->last_seq()) return Step::end;
    if (out_->ended()) return Step::end;
    if (settings_.resumable && out_->take_close_request()) return Step::end;  // polling: the client comes back
    return Step::wait;
}

void EventStream::written() { out_->mark_delivered(sent_); }

std::string EventStream::keep_alive_chunk() {
    std::string chunk;
    append_chunk(chunk, ": keep-alive\n\n");
    return chunk;
}

std::string EventStream::last_chunk() { return "0\r\n\r\n"; }

void EventStream::set_waker(std::function<void()> waker) { out_->set_waker(std::move(waker)); }

void EventStream::finish() {
    if (finished_) return;
    finished_ = true;
    out_->clear_waker();  // release the claim: another connection may resume the stream
    if (auto on_end = std::move(on_end_)) on_end();
}

}  // namespace toolport
