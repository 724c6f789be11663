// The shared-session state record and bus messages as text: plain code on nlohmann-json, so
// the HTTP transport (and its fuzzers) can read them without linking the Redis client.
#include "stores/shared_sessions.hpp"

#include <charconv>

namespace toolport::stores {

using nlohmann::json;

std::string SharedSessionState::to_json_text() const {
    json j = {{"v", 1},
              {"id", id},
              {"principal", principal},
              {"view", view},
              {"revision", revision},
              {"capabilities", client_capabilities},
              {"clientInfo", client_info},
              {"logLevel", log_level},
              {"subscriptions", subscriptions}};
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<SharedSessionState> SharedSessionState::from_json_text(std::string_view text) {
    auto j = json::parse(text, nullptr, false);
    if (!j.is_object() || j.value("v", 0) != 1) return std::nullopt;
    try {
        SharedSessionState s;
        s.id = j.at("id").get<std::string>();
        s.principal = j.at("principal").get<std::string>();
        s.view = j.at("view").get<std::string>();
        s.revision = j.at("revision").get<std::string>();
        s.client_capabilities = j.at("capabilities");
        s.client_info = j.at("clientInfo");
        s.log_level = j.at("logLevel").get<std::string>();
        s.subscriptions = j.at("subscriptions").get<std::vector<std::string>>();
        if (s.id.empty() || !s.client_capabilities.is_object()) return std::nullopt;
        return s;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

// "<kind> <origin> <session> <seq> <data>": ids and origins are hex, so spaces delimit.
std::string SessionBusMessage::encode() const {
    const char* k = kind == Kind::changed  ? "changed"
                    : kind == Kind::ended  ? "ended"
                    : kind == Kind::event  ? "event"
                    : kind == Kind::stream ? "stream"
                    : kind == Kind::relay  ? "relay"
                                           : "task";
    std::string out;
    out.reserve(data.size() + origin.size() + session_id.size() + 32);
    out.append(k).append(" ").append(origin).append(" ").append(session_id).append(" ");
    out.append(std::to_string(seq)).append(" ");
    if (kind == Kind::stream) out.append(std::to_string(stream)).append(" ");
    out.append(data);
    return out;
}

std::optional<SessionBusMessage> SessionBusMessage::decode(std::string_view text) {
    auto word = [&text]() -> std::optional<std::string_view> {
        auto space = text.find(' ');
        if (space == std::string_view::npos) return std::nullopt;
        auto w = text.substr(0, space);
        text.remove_prefix(space + 1);
        return w;
    };
    SessionBusMessage m;
    auto kind = word(), origin = word(), session = word(), seq = word();
    if (!kind || !origin || !session || !seq || session->empty()) return std::nullopt;
    if (*kind == "changed") m.kind = Kind::changed;
    else if (*kind == "ended") m.kind = Kind::ended;
    else if (*kind == "event") m.kind = Kind::event;
    else if (*kind == "stream") m.kind = Kind::stream;
    else if (*kind == "relay") m.kind = Kind::relay;
    else if (*kind == "task") m.kind = Kind::task;
    else return std::nullopt;
    auto r = std::from_chars(seq->data(), seq->data() + seq->size(), m.seq);
    if (r.ec != std::errc() || r.ptr != seq->data() + seq->size()) return std::nullopt;
    if (m.kind == Kind::stream) {
        auto stream = word();
        if (!stream) return std::nullopt;
        auto s = std::from_chars(stream->data(), stream->data() + stream->size(), m.stream);
        if (s.ec != std::errc() || s.ptr != stream->data() + stream->size()) return std::nullopt;
    }
    m.origin = std::string(*origin);
    m.session_id = std::string(*session);
    m.data = std::string(text);
    return m;
}

}  // namespace toolport::stores
