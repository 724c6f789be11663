// JsonIdScanner: finds the top-level "id" of a JSON-RPC message while its text streams
// past, without keeping the text. The stdio client transport drops a line that is over
// its size limit; scanning the line as it is thrown away still tells which request it
// answered, so that request can fail at once instead of waiting for its timeout.
//
//   JsonIdScanner scanner;
//   for (each piece of the line) scanner.feed(piece);
//   if (auto id = scanner.id(); id && !scanner.has_method()) ... it answered request *id
//
// Only members of the root object count: an "id" inside "result" or "params" is someone
// else's. Keys may come in any order and be written with escapes ("\u0069d" is "id").
// The scanner never throws and keeps a few hundred bytes at most; on text that is not
// JSON it finds nothing, or whatever it could make out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/request_id.hpp"

namespace toolport::client {

class JsonIdScanner {
public:
    // The next piece of the message's text (pieces in order, cut anywhere).
    void feed(std::string_view text);

    // The root object's "id" once its value was read in full: a string, or an integer
    // (one beyond 64 bits as a big integer id, as the payload parser keeps it). Empty
    // when there is none yet, or the value is something else (null, a fraction, an
    // object, a string longer than kMaxIdBytes). A repeated "id" replaces the earlier
    // one, as in the parsed message.
    const std::optional<protocol::RequestId>& id() const { return id_; }
    // The root object has a "method" member: a request or notification, not a reply.
    bool has_method() const { return has_method_; }

    // Ready for another message.
    void reset() { *this = JsonIdScanner(); }

    static constexpr std::size_t kMaxIdBytes = 1024;

private:
    enum class Key : std::uint8_t { other, id, method };
    // What the string being read is: a key of the root object, the id's value, or
    // anything else (skipped, but its quotes and escapes still matter).
    enum class StringRole : std::uint8_t { skipped, key, id_value };

    void take(char c);
    void take_in_string(char c);
    void take_escaped(char c);
    void take_hex_digit(char c);
    void take_code_point(std::uint32_t code_point);
    void append(std::string_view bytes);
    void end_string();
    void end_number();
    void start_value(char first);

    // Containers open around the current position; 1 = directly inside the root.
    std::size_t depth_ = 0;
    bool root_is_object_ = false;
    bool finished_ = false;  // the root value ended; the rest is not looked at
    bool expect_key_ = false;
    bool expect_value_ = false;  // a root member's ':' was read, its value not yet begun
    Key key_ = Key::other;       // the root member whose value comes next

    bool in_string_ = false;
    StringRole role_ = StringRole::skipped;
    bool escaped_ = false;
    int hex_digits_left_ = 0;
    std::uint32_t hex_value_ = 0;
    std::uint32_t high_surrogate_ = 0;  // waiting for its low half
    bool in_number_ = false;            // reading the id's value as a number
    bool text_usable_ = true;           // the kept text is whole and well formed
    std::string text_;                  // the key or id being read (bounded)

    std::optional<protocol::RequestId> id_;
    bool has_method_ = false;
};

}  // namespace toolport::client
