#include "protocol/json_text.hpp"

#include "protocol/json_writer.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

namespace toolport::protocol {

namespace {

using DomBuilder = nlohmann::detail::json_sax_dom_parser<Json>;

// nlohmann's own DOM builder, told where in the document it is, so that it can keep an
// overflowing integer at an id position. nlohmann hands an integer that does not fit 64
// bits to number_float together with its text (the lexeme); that text is kept instead of
// the rounded double. The parser calls these members by the static type it is given, so
// hiding the base's members is enough (they are not virtual).
class IdKeepingBuilder : public DomBuilder {
public:
    explicit IdKeepingBuilder(Json& root) : DomBuilder(root, /*allow_exceptions=*/true) {}

    bool start_object(std::size_t size) {
        enter(true);
        return DomBuilder::start_object(size);
    }
    bool end_object() {
        --depth_;
        return DomBuilder::end_object();
    }
    bool start_array(std::size_t size) {
        enter(false);
        return DomBuilder::start_array(size);
    }
    bool end_array() {
        --depth_;
        return DomBuilder::end_array();
    }
    bool key(string_t& name) {
        if (depth_ <= kTracked) frames_[depth_ - 1].key = key_of(name);
        return DomBuilder::key(name);
    }
    bool number_float(number_float_t value, const string_t& lexeme) {
        if (const Position where = position(); where != Position::elsewhere && is_integer_lexeme(lexeme)) {
            if (where == Position::cancelled_request_id) kept_request_id_ = true;
            binary_t digits(std::vector<std::uint8_t>(lexeme.begin(), lexeme.end()), kBigIntegerIdSubtype);
            return DomBuilder::binary(digits);
        }
        return DomBuilder::number_float(value, lexeme);
    }

    // A params.requestId was kept before the message's method was known.
    bool kept_request_id() const { return kept_request_id_; }

private:
    enum class Key : std::uint8_t { other, id, params, request_id };
    enum class Position : std::uint8_t { elsewhere, message_id, cancelled_request_id };
    struct Frame {
        bool object = false;
        Key key = Key::other;
    };
    // Ids lie at most three containers deep: [ {message} {params} ].
    static constexpr std::size_t kTracked = 3;

    static Key key_of(const string_t& name) {
        switch (name.size()) {  // most keys are told apart by their length alone
            case 2: return name == "id" ? Key::id : Key::other;
            case 6: return name == "params" ? Key::params : Key::other;
            case 9: return name == "requestId" ? Key::request_id : Key::other;
            default: return Key::other;
        }
    }

    void enter(bool object) {
        if (depth_ < kTracked) frames_[depth_] = Frame{object, Key::other};
        ++depth_;
    }

    // Where a value arriving now goes: frames_[m] is the message object (the root, or a
    // member of a root array).
    Position position() const {
        if (depth_ == 0 || depth_ > kTracked) return Position::elsewhere;
        const std::size_t m = frames_[0].object ? 0 : 1;
        if (depth_ <= m || !frames_[m].object) return Position::elsewhere;
        if (depth_ == m + 1) return frames_[m].key == Key::id ? Position::message_id : Position::elsewhere;
        if (depth_ == m + 2 && frames_[m].key == Key::params && frames_[m + 1].object &&
            frames_[m + 1].key == Key::request_id) {
            return Position::cancelled_request_id;
        }
        return Position::elsewhere;
    }

    std::array<Frame, kTracked> frames_{};
    std::size_t depth_ = 0;
    bool kept_request_id_ = false;
};

// A requestId is an id only in notifications/cancelled; anywhere else the big number goes
// back to the double nlohmann would have made of it.
void restore_request_id_outside_cancellation(Json& message) {
    if (!message.is_object()) return;
    auto params = message.find("params");
    if (params == message.end() || !params->is_object()) return;
    auto request_id = params->find("requestId");
    if (request_id == params->end() || !is_big_integer_id(*request_id)) return;
    auto method = message.find("method");
    if (method != message.end() && *method == "notifications/cancelled") return;
    *request_id = std::strtod(std::string(big_integer_id_digits(*request_id)).c_str(), nullptr);
}

}  // namespace

Json parse_json_keeping_ids(std::string_view text) {
    Json root;
    IdKeepingBuilder builder(root);
    Json::sax_parse(text.begin(), text.end(), &builder, nlohmann::detail::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
    if (builder.kept_request_id()) {
        if (root.is_array()) {
            for (auto& member : root) restore_request_id_outside_cancellation(member);
        } else {
            restore_request_id_outside_cancellation(root);
        }
    }
    return root;
}

std::string serialize(const Json& value) {
    std::string out;
    out.reserve(512);  // a typical reply fits; one allocation
    write_json(value, out);
    return out;
}

}  // namespace toolport::protocol
