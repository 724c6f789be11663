#include "providers/pin_api.hpp"

#include <fmt/format.h>

#include "providers/pin_guard.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::pins {

namespace {

std::pair<int, std::string> refuse(int status, const std::string& why) { return {status, Json{{"error", why}}.dump()}; }

std::string text_of(const Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Task<std::pair<int, std::string>> answer_pins_api(PinGuard& guard, std::string method, std::string path,
                                                  std::string body, std::string who) {
    if (path == "/admin/pins") co_return std::pair<int, std::string>{200, guard.describe().dump()};
    const Json request = Json::parse(body, nullptr, false);
    if (!request.is_object()) co_return refuse(400, "the body must be a JSON object: {\"source\": ..., \"name\": ...}");
    const std::string source = text_of(request, "source");
    const std::string name = text_of(request, "name");
    if (source.empty()) co_return refuse(400, "\"source\" is required: the source whose pins to change");
    // Decided on what the store holds now, not on this process's last poll: with a store
    // shared by replicas, what is pending may have been recorded (or approved) by another.
    // A store that cannot be read fails the request (500) rather than deciding on old pins.
    co_await guard.reload();
    if (path == "/admin/pins/approve") {
        const std::string digest = text_of(request, "digest");
        if (!digest.empty()) {
            // What the operator reviewed must be what is pending now.
            const auto& snapshot = guard.snapshot();
            auto it = snapshot.find(source);
            bool found = false;
            if (it != snapshot.end()) {
                for (const auto& [key, record] : it->second.pending) {
                    if (!name.empty() && record.name != name && key != name) continue;
                    found = true;
                    if (record.digest.rfind(digest, 0) != 0) {
                        co_return refuse(409, fmt::format("{} {} changed since it was reviewed (its digest is not {}); "
                                                          "nothing approved",
                                                          record.kind, util::sanitize_for_message(record.name, 128),
                                                          util::sanitize_for_message(digest, 80)));
                    }
                }
            }
            if (!found) co_return refuse(404, "nothing pending matches; nothing approved");
        }
        auto approved = co_await guard.approve(source, name, who);
        Json out = Json::array();
        for (const auto& record : approved) out.push_back(record.to_json());
        co_return std::pair<int, std::string>{200, Json{{"approved", std::move(out)}}.dump()};
    }
    if (path == "/admin/pins/reset") {
        const std::size_t gone = co_await guard.reset(source, name, who);
        co_return std::pair<int, std::string>{200, Json{{"reset", gone}}.dump()};
    }
    co_return refuse(404, "Not Found: /admin/pins, /admin/pins/approve or /admin/pins/reset");
}

}  // namespace toolport::pins
