#include "util/redaction/json_redaction.hpp"

namespace toolport::util::redaction {

std::size_t redact_json(Json& value, DetectorSet set, RedactionCounts* counts) {
    if (!set) return 0;
    switch (value.type()) {
        case Json::value_t::string: return redact_text(value.get_ref<std::string&>(), set, counts);
        case Json::value_t::array: {
            std::size_t n = 0;
            for (auto& item : value) n += redact_json(item, set, counts);
            return n;
        }
        case Json::value_t::object: {
            std::size_t n = 0;
            for (auto it = value.begin(); it != value.end(); ++it) n += redact_json(it.value(), set, counts);
            return n;
        }
        default: return 0;
    }
}

void scan_json_injection(const Json& value, InjectionFindings& found) {
    switch (value.type()) {
        case Json::value_t::string: scan_injection(value.get_ref<const std::string&>(), found); break;
        case Json::value_t::array:
            for (const auto& item : value) scan_json_injection(item, found);
            break;
        case Json::value_t::object:
            for (auto it = value.begin(); it != value.end(); ++it) {
                scan_injection(it.key(), found);
                scan_json_injection(it.value(), found);
            }
            break;
        default: break;
    }
}

}  // namespace toolport::util::redaction
