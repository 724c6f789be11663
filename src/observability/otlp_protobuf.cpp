#include "observability/otlp_protobuf.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "toolport_version.hpp"
#include "util/utf8.hpp"

namespace toolport::observability {

namespace {

// Field numbers, from opentelemetry-proto (v1 of each message).
namespace field {
// collector/trace/v1: ExportTraceServiceRequest
constexpr int request_resource_spans = 1;
// trace/v1: ResourceSpans, ScopeSpans
constexpr int resource_spans_resource = 1;
constexpr int resource_spans_scope_spans = 2;
constexpr int scope_spans_scope = 1;
constexpr int scope_spans_spans = 2;
// resource/v1: Resource
constexpr int resource_attributes = 1;
// common/v1: InstrumentationScope, KeyValue, AnyValue
constexpr int scope_name = 1;
constexpr int scope_version = 2;
constexpr int key_value_key = 1;
constexpr int key_value_value = 2;
constexpr int any_string = 1;
constexpr int any_bool = 2;
constexpr int any_int = 3;
constexpr int any_double = 4;
// trace/v1: Span, Span.Event, Status
constexpr int span_trace_id = 1;
constexpr int span_span_id = 2;
constexpr int span_trace_state = 3;
constexpr int span_parent_span_id = 4;
constexpr int span_name = 5;
constexpr int span_kind = 6;
constexpr int span_start_time = 7;
constexpr int span_end_time = 8;
constexpr int span_attributes = 9;
constexpr int span_events = 11;
constexpr int span_status = 15;
constexpr int span_flags = 16;
constexpr int event_time = 1;
constexpr int event_name = 2;
constexpr int event_attributes = 3;
constexpr int status_message = 2;
constexpr int status_code = 3;
}  // namespace field

// Protobuf's wire types.
enum class Wire : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

// Appends fields to one buffer; a nested message is opened, written, then closed, which
// puts its length in front of it (moving its bytes by the length's size). Each field makes
// room for itself once and then writes through a pointer: a batch is hundreds of spans of
// dozens of small fields, and a capacity check per byte was most of the encoding's time.
class Writer {
public:
    Writer() = default;
    // Writes into `room` (taken, given back by release()): its size is what is there to
    // write into.
    explicit Writer(std::string& room) : buffer_(std::move(room)) {}
    void varint(std::uint64_t value) {
        reserve(kMaxVarint);
        put_varint(value);
    }
    void tag(int number, Wire wire) { varint((static_cast<std::uint64_t>(number) << 3) | static_cast<unsigned>(wire)); }

    void uint_field(int number, std::uint64_t value) {
        reserve(2 * kMaxVarint);
        put_tag(number, Wire::varint);
        put_varint(value);
    }
    // int64: two's complement, so a negative number takes ten bytes.
    void int_field(int number, std::int64_t value) { uint_field(number, static_cast<std::uint64_t>(value)); }
    void fixed64_field(int number, std::uint64_t value) {
        reserve(kMaxVarint + 8);
        put_tag(number, Wire::fixed64);
        put_little_endian(value, 8);
    }
    void fixed32_field(int number, std::uint32_t value) {
        reserve(kMaxVarint + 4);
        put_tag(number, Wire::fixed32);
        put_little_endian(value, 4);
    }
    void double_field(int number, double value) {
        std::uint64_t bits = 0;
        static_assert(sizeof bits == sizeof value);
        std::memcpy(&bits, &value, sizeof bits);
        fixed64_field(number, bits);
    }
    void bytes_field(int number, std::string_view bytes) {
        reserve(2 * kMaxVarint + bytes.size());
        put_tag(number, Wire::length_delimited);
        put_varint(bytes.size());
        put_bytes(bytes);
    }
    void string_field(int number, std::string_view text) {
        if (util::valid_utf8(text)) return bytes_field(number, text);
        bytes_field(number, util::to_valid_utf8(text));
    }

    void open(int number) {
        tag(number, Wire::length_delimited);
        open_.push_back(length_);
    }
    void close() {
        const std::size_t start = open_.back();
        open_.pop_back();
        std::uint64_t length = length_ - start;
        char prefix[kMaxVarint];
        std::size_t n = 0;
        do {
            prefix[n++] = static_cast<char>((length & 0x7F) | (length >= 0x80 ? 0x80 : 0));
            length >>= 7;
        } while (length != 0);
        reserve(n);
        char* content = buffer_.data() + start;
        std::memmove(content + n, content, length_ - start);
        std::memcpy(content, prefix, n);
        length_ += n;
    }

    std::string take() {
        buffer_.resize(length_);
        length_ = 0;
        return std::move(buffer_);
    }
    // Gives the buffer back to `room` whole (size untouched); returns how many bytes were written.
    std::size_t release(std::string& room) {
        const std::size_t written = length_;
        length_ = 0;
        room = std::move(buffer_);
        return written;
    }

    // The unchecked writes, for a caller that made room for all it writes with reserve().
    static constexpr std::size_t kMaxVarint = 10;
    // buffer_.size() is the room; length_ the bytes written.
    void reserve(std::size_t n) {
        if (buffer_.size() - length_ < n) buffer_.resize(std::max(buffer_.size() * 2, length_ + n + 256));
    }
    void put_varint(std::uint64_t value) {
        char* out = buffer_.data() + length_;
        while (value >= 0x80) {
            *out++ = static_cast<char>((value & 0x7F) | 0x80);
            value >>= 7;
        }
        *out++ = static_cast<char>(value);
        length_ = static_cast<std::size_t>(out - buffer_.data());
    }
    void put_tag(int number, Wire wire) {
        put_varint((static_cast<std::uint64_t>(number) << 3) | static_cast<unsigned>(wire));
    }
    void put_little_endian(std::uint64_t value, int bytes) {
        char* out = buffer_.data() + length_;
        for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
        length_ += static_cast<std::size_t>(bytes);
    }
    void put_bytes(std::string_view bytes) {
        char* out = buffer_.data() + length_;
        const char* in = bytes.data();
        const std::size_t n = bytes.size();
        // Most are keys and short values: copied as two overlapping words rather than by a
        // call to memcpy, which cost more than the copy itself.
        if (n >= 8 && n <= 16) {
            std::uint64_t head, tail;
            std::memcpy(&head, in, 8);
            std::memcpy(&tail, in + n - 8, 8);
            std::memcpy(out, &head, 8);
            std::memcpy(out + n - 8, &tail, 8);
        } else if (n >= 4 && n < 8) {
            std::uint32_t head, tail;
            std::memcpy(&head, in, 4);
            std::memcpy(&tail, in + n - 4, 4);
            std::memcpy(out, &head, 4);
            std::memcpy(out + n - 4, &tail, 4);
        } else if (n < 4) {
            for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
        } else {
            std::memcpy(out, in, n);
        }
        length_ += n;
    }
    // Room for about `n` bytes in all, taken at once (growing by doubling zero-fills it
    // over and over).
    void expect(std::size_t n) {
        if (buffer_.size() < n) buffer_.resize(n);
    }

private:
    std::string buffer_;
    std::size_t length_ = 0;
    std::vector<std::size_t> open_;  // where each open message's content starts
};

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& id) {
    return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
std::string_view id_bytes(const std::array<std::uint8_t, N>& id) {
    return {reinterpret_cast<const char*>(id.data()), N};
}

std::size_t varint_size(std::uint64_t value) {
    return value < 0x80 ? 1 : (static_cast<std::size_t>(std::bit_width(value)) + 6) / 7;
}

std::size_t tag_size(int number, Wire wire) {
    return varint_size((static_cast<std::uint64_t>(number) << 3) | static_cast<unsigned>(wire));
}

// The size of a length-delimited field holding `n` bytes.
std::size_t delimited_size(int number, std::size_t n) {
    return tag_size(number, Wire::length_delimited) + varint_size(n) + n;
}

// Text as it goes on the wire: itself when valid UTF-8, else repaired into `spare`.
std::string_view wire_text(std::string_view text, std::string& spare) {
    if (util::valid_utf8(text)) return text;
    spare = util::to_valid_utf8(text);
    return spare;
}

// KeyValue messages, their sizes computed before they are written: an attribute is small,
// and a length prefix inserted after its content (Writer::close) moved every byte after it,
// twice per attribute.
void write_attributes(Writer& w, int number, const Attributes& attributes) {
    std::string spare_key, spare_value;
    for (const auto& attribute : attributes) {
        const std::string_view key = attribute.key.ascii() ? attribute.key.text()
                                                           : wire_text(attribute.key.text(), spare_key);
        std::string_view text;
        std::size_t value_size = 0;
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::string>) {
                    text = wire_text(v, spare_value);
                    value_size = delimited_size(field::any_string, text.size());
                } else if constexpr (std::is_same_v<T, bool>) {
                    value_size = tag_size(field::any_bool, Wire::varint) + 1;
                } else if constexpr (std::is_same_v<T, std::int64_t>) {
                    value_size = tag_size(field::any_int, Wire::varint) + varint_size(static_cast<std::uint64_t>(v));
                } else {
                    value_size = tag_size(field::any_double, Wire::fixed64) + 8;
                }
            },
            attribute.value);
        const std::size_t pair_size = (key.empty() ? 0 : delimited_size(field::key_value_key, key.size())) +
                                      delimited_size(field::key_value_value, value_size);
        // Room for the whole KeyValue once, then written unchecked.
        w.reserve(pair_size + Writer::kMaxVarint + 2);
        w.put_tag(number, Wire::length_delimited);
        w.put_varint(pair_size);
        if (!key.empty()) {
            w.put_tag(field::key_value_key, Wire::length_delimited);
            w.put_varint(key.size());
            w.put_bytes(key);
        }
        w.put_tag(field::key_value_value, Wire::length_delimited);
        w.put_varint(value_size);
        // A oneof member is written even when it holds its type's default: it is what is set.
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::string>) {
                    w.put_tag(field::any_string, Wire::length_delimited);
                    w.put_varint(text.size());
                    w.put_bytes(text);
                } else if constexpr (std::is_same_v<T, bool>) {
                    w.put_tag(field::any_bool, Wire::varint);
                    w.put_varint(v ? 1 : 0);
                } else if constexpr (std::is_same_v<T, std::int64_t>) {
                    w.put_tag(field::any_int, Wire::varint);
                    w.put_varint(static_cast<std::uint64_t>(v));
                } else {
                    std::uint64_t bits = 0;
                    static_assert(sizeof bits == sizeof v);
                    std::memcpy(&bits, &v, sizeof bits);
                    w.put_tag(field::any_double, Wire::fixed64);
                    w.put_little_endian(bits, 8);
                }
            },
            attribute.value);
    }
}

void write_span(Writer& w, const SpanData& span) {
    w.open(field::scope_spans_spans);
    w.bytes_field(field::span_trace_id, id_bytes(span.trace_id));
    w.bytes_field(field::span_span_id, id_bytes(span.span_id));
    if (!span.trace_state.empty()) w.string_field(field::span_trace_state, span.trace_state);
    if (!all_zero(span.parent_span_id)) w.bytes_field(field::span_parent_span_id, id_bytes(span.parent_span_id));
    if (!span.name.empty()) w.string_field(field::span_name, span.name);
    w.uint_field(field::span_kind, static_cast<std::uint64_t>(span.kind));
    if (span.start_unix_nano != 0) w.fixed64_field(field::span_start_time, span.start_unix_nano);
    if (span.end_unix_nano != 0) w.fixed64_field(field::span_end_time, span.end_unix_nano);
    write_attributes(w, field::span_attributes, span.attributes);
    for (const auto& event : span.events) {
        w.open(field::span_events);
        if (event.time_unix_nano != 0) w.fixed64_field(field::event_time, event.time_unix_nano);
        if (!event.name.empty()) w.string_field(field::event_name, event.name);
        write_attributes(w, field::event_attributes, event.attributes);
        w.close();
    }
    if (span.status != SpanStatusCode::unset || !span.status_message.empty()) {
        w.open(field::span_status);
        if (!span.status_message.empty()) w.string_field(field::status_message, span.status_message);
        if (span.status != SpanStatusCode::unset)
            w.uint_field(field::status_code, static_cast<std::uint64_t>(span.status));
        w.close();
    }
    w.fixed32_field(field::span_flags, otlp_span_flags(span));
    w.close();
}

// Reads protobuf fields one at a time (what decode_otlp_partial_success needs: varints and
// length-delimited fields, others skipped). Every read is bounds-checked: `ok` goes false on
// a truncated or malformed message and stays so.
class Reader {
public:
    explicit Reader(std::string_view data) : data_(data) {}
    bool ok() const { return ok_; }
    bool done() const { return !ok_ || at_ == data_.size(); }

    std::uint64_t varint() {
        std::uint64_t value = 0;
        for (int shift = 0; shift < 64 && at_ < data_.size(); shift += 7) {
            const auto byte = static_cast<unsigned char>(data_[at_++]);
            value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
            if (!(byte & 0x80)) return value;
        }
        ok_ = false;
        return 0;
    }
    std::string_view bytes() {
        const auto length = varint();
        if (!ok_ || length > data_.size() - at_) {
            ok_ = false;
            return {};
        }
        auto out = data_.substr(at_, length);
        at_ += length;
        return out;
    }
    void skip(Wire wire) {
        switch (wire) {
            case Wire::varint: varint(); return;
            case Wire::length_delimited: bytes(); return;
            case Wire::fixed64: advance(8); return;
            case Wire::fixed32: advance(4); return;
        }
        ok_ = false;
    }

private:
    void advance(std::size_t n) {
        if (n > data_.size() - at_) ok_ = false;
        else at_ += n;
    }
    std::string_view data_;
    std::size_t at_ = 0;
    bool ok_ = true;
};

}  // namespace

std::optional<PartialSuccess> decode_otlp_partial_success(std::string_view response) {
    // collector/trace/v1: ExportTraceServiceResponse.partial_success = 1;
    // ExportTracePartialSuccess.rejected_spans = 1 (int64), error_message = 2 (string).
    Reader message(response);
    std::optional<PartialSuccess> found;
    while (!message.done()) {
        const auto tag = message.varint();
        const auto wire = static_cast<Wire>(tag & 7);
        if (tag >> 3 != 1 || wire != Wire::length_delimited) {
            message.skip(wire);
            continue;
        }
        Reader partial(message.bytes());
        PartialSuccess p;
        while (message.ok() && !partial.done()) {
            const auto field = partial.varint();
            const auto field_wire = static_cast<Wire>(field & 7);
            if (field >> 3 == 1 && field_wire == Wire::varint)
                p.rejected_spans = static_cast<std::int64_t>(partial.varint());
            else if (field >> 3 == 2 && field_wire == Wire::length_delimited) p.error_message = partial.bytes();
            else partial.skip(field_wire);
        }
        if (!partial.ok()) return std::nullopt;
        found = std::move(p);
    }
    if (!message.ok()) return std::nullopt;
    return found;
}

InstrumentationScope toolport_scope() { return {"toolport", kToolportVersion}; }

std::uint32_t otlp_span_flags(const SpanData& span) {
    constexpr std::uint32_t has_is_remote = 0x100, is_remote = 0x200;
    return span.flags | has_is_remote | (span.parent_is_remote ? is_remote : 0);
}

namespace {

void write_request(Writer& w, const Attributes& resource, const InstrumentationScope& scope,
                   std::span<const SpanData> spans) {
    w.expect(512 + spans.size() * 640);  // a server span with its attributes is about 500 bytes
    w.open(field::request_resource_spans);
    w.open(field::resource_spans_resource);
    write_attributes(w, field::resource_attributes, resource);
    w.close();
    w.open(field::resource_spans_scope_spans);
    w.open(field::scope_spans_scope);
    if (!scope.name.empty()) w.string_field(field::scope_name, scope.name);
    if (!scope.version.empty()) w.string_field(field::scope_version, scope.version);
    w.close();
    for (const auto& span : spans) write_span(w, span);
    w.close();
    w.close();
}

}  // namespace

std::string encode_otlp_protobuf(const Attributes& resource, const InstrumentationScope& scope,
                                 std::span<const SpanData> spans) {
    Writer w;
    write_request(w, resource, scope, spans);
    return w.take();
}

std::string_view encode_otlp_protobuf(const Attributes& resource, const InstrumentationScope& scope,
                                      std::span<const SpanData> spans, std::string& room) {
    Writer w(room);
    write_request(w, resource, scope, spans);
    const std::size_t written = w.release(room);
    return std::string_view(room).substr(0, written);
}

}  // namespace toolport::observability
