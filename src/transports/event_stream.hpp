// EventStream: what an SSE response says and when it ends, minus the socket. The
// connection (http_server.cpp) writes head(), then in turn the chunks next() gives, waits
// for the waker between them, and closes when next() says so.
//
// A stream ends when its requests are all answered and sent, when the server closes it for
// SSE polling (the client resumes with Last-Event-ID), when its session ends, or when the
// client goes away. Its `on_end` runs exactly once, when the connection lets it go.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transports/http_exchange.hpp"

namespace toolport {

class OutStream;

struct EventStreamSettings {
    std::string session_id;                 // sent as Mcp-Session-Id when not empty
    bool resumable = false;                 // events carry ids; a priming event opens the stream (SEP-1699)
    std::uint64_t after_seq = 0;            // resume: events up to this one were seen already
    std::string prelude;                    // written first (the legacy transport's endpoint event)
    std::chrono::milliseconds retry{1000};  // how soon a client comes back after polling
    // Events already in SSE form ("event: x\ndata: ...\n\n"), written as they are: the
    // operator console's streams, which are not JSON-RPC messages.
    bool preformatted = false;
    std::vector<std::pair<std::string, std::string>> headers;  // added to the response's head
    std::string cache_control = "no-cache, no-transform";
};

class EventStream {
public:
    // Claims `out` at once, so no other connection attaches to it meanwhile.
    EventStream(std::shared_ptr<OutStream> out, unsigned version, EventStreamSettings settings,
                std::function<void()> on_end);
    ~EventStream();
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    // The response's header block (chunked transfer, no keep-alive).
    std::string head() const;

    enum class Step {
        wait,  // write the chunk (if any), then wait for the waker or the idle timeout
        end,   // write the chunk and the last chunk, then close the connection
    };
    // Appends to `chunk` (chunk-encoded) what the client has not been sent yet.
    Step next(std::string& chunk);
    // The chunk from the last next() reached the socket.
    void written();
    // A comment that keeps proxies from timing an idle stream out.
    static std::string keep_alive_chunk();
    static std::string last_chunk();

    // Called (on the engine's loop) when there is something new to send.
    void set_waker(std::function<void()> waker);
    // The connection lets the stream go (ended, the client left, or the write failed).
    void finish();

private:
    std::shared_ptr<OutStream> out_;
    unsigned version_;
    EventStreamSettings settings_;
    std::function<void()> on_end_;
    std::uint64_t sent_ = 0;  // the last event put into a chunk
    bool primed_ = false;
    bool finished_ = false;
};

// Wraps `data` as one chunk of chunked transfer encoding.
void append_chunk(std::string& out, std::string_view data);

}  // namespace toolport
