// SseParser: reads a text/event-stream body as the WHATWG HTML standard defines it
// (§9.2 "Server-sent events"), fed in whatever chunks the network delivers.
//
// Lines end in CRLF, LF or CR (a CRLF split across two chunks is one line end); a leading
// UTF-8 BOM is skipped; ":" starts a comment; "data" lines of one event are joined with
// "\n"; "id" sets the last event ID (kept across events, used to resume a stream with
// Last-Event-ID) unless it contains NUL; "retry" with only digits sets the reconnection
// delay; an event without any "data" line is not dispatched; an unfinished event at the
// end of the stream is dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::client {

struct SseEvent {
    std::string type = "message";  // the "event" field; "message" when the event set none
    std::string data;              // "data" lines joined with "\n"
    std::string id;                // the last event ID when this event was dispatched
};

// An event (or a line) grew beyond the parser's limit.
struct SseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class SseParser {
public:
    explicit SseParser(std::size_t max_event_bytes = 64 * 1024 * 1024) : max_event_bytes_(max_event_bytes) {}

    // Consumes `bytes` and returns the events they completed, in order. Throws SseError
    // when the event being read exceeds max_event_bytes (the parser is then unusable).
    std::vector<SseEvent> feed(std::string_view bytes);

    const std::string& last_event_id() const { return last_event_id_; }
    // The server's "retry" advice, when it gave one.
    std::optional<std::chrono::milliseconds> retry() const { return retry_; }

private:
    void take_line(std::vector<SseEvent>& out);
    void dispatch(std::vector<SseEvent>& out);

    std::size_t max_event_bytes_;
    std::string line_;        // the line being read
    bool after_cr_ = false;   // the previous chunk ended in CR: a leading LF is part of that line end
    bool first_line_ = true;  // a BOM may start only the first line
    std::string data_;        // "data" values, each followed by "\n"
    std::string type_;
    std::string last_event_id_;
    std::optional<std::chrono::milliseconds> retry_;
};

}  // namespace toolport::client
