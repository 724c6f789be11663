#include "util/redaction/detectors.hpp"

namespace toolport::util::redaction {

const std::vector<std::string_view>& detector_names() {
    static const std::vector<std::string_view> names = {"api_key", "jwt",   "bearer", "private_key", "token",
                                                        "email",   "phone", "card",   "ssn",         "iban"};
    return names;
}

std::string_view name(Detector d) { return detector_names()[static_cast<std::size_t>(d)]; }

std::optional<DetectorSet> parse_detectors(const std::vector<std::string>& names, std::string* unknown) {
    DetectorSet set = 0;
    for (const auto& n : names) {
        if (n == "all") {
            set |= kAllDetectors;
            continue;
        }
        if (n == "secrets") {
            set |= kSecretDetectors;
            continue;
        }
        if (n == "personal") {
            set |= kPersonalDetectors;
            continue;
        }
        bool found = false;
        for (std::size_t i = 0; i < kDetectorCount; ++i) {
            if (detector_names()[i] == n) {
                set |= bit(static_cast<Detector>(i));
                found = true;
            }
        }
        if (!found) {
            if (unknown) *unknown = n;
            return std::nullopt;
        }
    }
    return set;
}

}  // namespace toolport::util::redaction
