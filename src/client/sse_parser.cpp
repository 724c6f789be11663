#include "client/sse_parser.hpp"

#include <charconv>
#include <cstdint>

namespace toolport::client {

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
    std::vector<SseEvent> out;
    std::size_t pos = 0;
    if (after_cr_ && !bytes.empty()) {
        if (bytes.front() == '\n') pos = 1;  // the LF of a CRLF split across chunks
        after_cr_ = false;
    }
    while (pos < bytes.size()) {
        auto end = bytes.find_first_of("\r\n", pos);
        if (end == std::string_view::npos) {
            line_.append(bytes.substr(pos));
            break;
        }
        line_.append(bytes.substr(pos, end - pos));
        take_line(out);
        if (bytes[end] == '\r') {
            if (end + 1 == bytes.size()) {
                after_cr_ = true;
                pos = end + 1;
                break;
            }
            if (bytes[end + 1] == '\n') ++end;
        }
        pos = end + 1;
    }
    if (line_.size() + data_.size() > max_event_bytes_) {
        throw SseError("an event of the response stream exceeds " + std::to_string(max_event_bytes_) + " bytes");
    }
    return out;
}

void SseParser::take_line(std::vector<SseEvent>& out) {
    std::string_view line = line_;
    if (first_line_) {
        first_line_ = false;
        if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    }
    if (line.empty()) {
        dispatch(out);
    } else if (line.front() != ':') {  // a leading colon marks a comment (keep-alives)
        std::string_view field = line, value;
        if (auto colon = line.find(':'); colon != std::string_view::npos) {
            field = line.substr(0, colon);
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            data_.append(value);
            data_ += '\n';
        } else if (field == "event") {
            type_.assign(value);
        } else if (field == "id") {
            if (value.find('\0') == std::string_view::npos) last_event_id_.assign(value);
        } else if (field == "retry") {
            std::uint64_t ms = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
            // Only ASCII digits count; anything else (or an absurd number) is ignored.
            if (!value.empty() && ec == std::errc() && end == value.data() + value.size() && ms <= 86'400'000) {
                retry_ = std::chrono::milliseconds(ms);
            }
        }
        // Other fields are ignored, as the standard says.
    }
    line_.clear();
    if (data_.size() > max_event_bytes_) {
        throw SseError("an event of the response stream exceeds " + std::to_string(max_event_bytes_) + " bytes");
    }
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
    if (data_.empty()) {
        type_.clear();
        return;
    }
    data_.pop_back();  // the "\n" after the last data line
    SseEvent event;
    if (!type_.empty()) event.type = std::move(type_);
    event.data = std::move(data_);
    event.id = last_event_id_;
    out.push_back(std::move(event));
    data_.clear();
    type_.clear();
}

}  // namespace toolport::client
