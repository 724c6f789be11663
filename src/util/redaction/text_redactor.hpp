// Finds secrets and personal data in text and replaces them with "[REDACTED:<detector>]".
// Hand-written scanners, one pass over the text: words (runs of letters, digits and the
// punctuation tokens are made of) are looked at once each, numbers with their separators
// (cards, SSNs, phones) once each; no regular expression, nothing looked at twice.
//
//   RedactionCounts counts;
//   std::string text = "mail alice@example.com, key AKIAIOSFODNN7EXAMPLE";
//   redact_text(text, kAllDetectors, &counts);   // "mail [REDACTED:email], key [REDACTED:api_key]"
//
// What each detector takes, and the near misses it leaves alone (a card number failing
// Luhn, an SSN in a never-issued range, a UUID or a hex digest), is in detectors.hpp and
// docs/security.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/redaction/detectors.hpp"

namespace toolport::util::redaction {

struct Finding {
    std::size_t begin;
    std::size_t end;  // one past the last byte
    Detector detector;
};

// How many of each detector's findings were replaced.
struct RedactionCounts {
    std::array<std::uint32_t, kDetectorCount> by_detector{};

    std::uint32_t total() const;
    RedactionCounts& operator+=(const RedactionCounts& other);
};

// The spans of `text` the detectors in `set` take for secrets or personal data, appended
// to `out` in order, never overlapping.
void find_sensitive(std::string_view text, DetectorSet set, std::vector<Finding>& out);

// `text` with every finding replaced by "[REDACTED:<detector>]" (the text around is kept
// byte for byte, so valid UTF-8 stays valid). Returns how many were replaced, and adds
// them to `counts` when given. A text with none is left untouched (not copied).
std::size_t redact_text(std::string& text, DetectorSet set, RedactionCounts* counts = nullptr);

// "[REDACTED:email]".
std::string replacement(Detector d);

}  // namespace toolport::util::redaction
