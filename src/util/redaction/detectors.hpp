// The detectors of the built-in redaction (text_redactor.hpp), and the set of them a
// source's configuration turns on. Names are what the configuration, the replacement text
// ("[REDACTED:email]") and the metrics' `detector` label say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::util::redaction {

enum class Detector : std::uint8_t {
    api_key,      // a key or token of a known vendor shape: AKIA…, ghp_…, xoxb-…, sk_live_…, AIza…
    jwt,          // eyJ….eyJ….signature
    bearer,       // the token after "Bearer "
    private_key,  // a PEM "-----BEGIN … PRIVATE KEY-----" block
    token,        // a long random-looking token, found by its entropy
    email,
    phone,  // with a + prefix or separators (never a bare run of digits)
    card,   // a payment card number that passes the Luhn check
    ssn,    // a US social security number in a valid range, written with separators
    iban,   // an IBAN whose mod-97 check holds
};
inline constexpr std::size_t kDetectorCount = 10;

// A set of detectors, one bit each.
using DetectorSet = std::uint32_t;
inline constexpr DetectorSet bit(Detector d) { return DetectorSet{1} << static_cast<unsigned>(d); }
inline constexpr DetectorSet kSecretDetectors = bit(Detector::api_key) | bit(Detector::jwt) | bit(Detector::bearer) |
                                                bit(Detector::private_key) | bit(Detector::token);
inline constexpr DetectorSet kPersonalDetectors = bit(Detector::email) | bit(Detector::phone) | bit(Detector::card) |
                                                  bit(Detector::ssn) | bit(Detector::iban);
inline constexpr DetectorSet kAllDetectors = kSecretDetectors | kPersonalDetectors;
inline constexpr bool has(DetectorSet set, Detector d) { return (set & bit(d)) != 0; }

std::string_view name(Detector d);
// Every detector's name, in enum order.
const std::vector<std::string_view>& detector_names();

// The set the configuration's list names: detector names, and the groups "secrets"
// (api_key, jwt, bearer, private_key, token), "personal" (email, phone, card, ssn, iban)
// and "all". On an unknown name: nullopt, with that name in `unknown`.
std::optional<DetectorSet> parse_detectors(const std::vector<std::string>& names, std::string* unknown = nullptr);

}  // namespace toolport::util::redaction
