// The text scanners (text_redactor.hpp, injection_markers.hpp) applied to every string of
// a JSON value. Only string values change, and they stay strings: the value keeps its
// shape, its member names, numbers and booleans, so it stays what a schema said it was
// (short of a pattern or format the replacement no longer matches).
#pragma once

#include "util/json.hpp"
#include "util/redaction/injection_markers.hpp"
#include "util/redaction/text_redactor.hpp"

namespace toolport::util::redaction {

// Every string value in `value` redacted in place. Returns how many findings were
// replaced (added to `counts` when given).
std::size_t redact_json(Json& value, DetectorSet set, RedactionCounts* counts = nullptr);

// The injection markers of every string value (and member name) in `value`.
void scan_json_injection(const Json& value, InjectionFindings& found);

// The same over JSON text (one well-formed value, as a gateway passes an upstream's result
// on unread): each string literal is scanned as the string it denotes (escapes decoded),
// without building the document.
void scan_json_text_injection(std::string_view json_text, InjectionFindings& found);

}  // namespace toolport::util::redaction
