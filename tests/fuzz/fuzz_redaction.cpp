// fuzz_redaction: the built-in redaction's and injection scan's scanners (util/redaction/)
// on any bytes. Properties, not only crashes:
//   - findings are in order, never overlap, and lie within the text;
//   - redacting leaves the text around each finding byte for byte, and valid UTF-8 stays
//     valid (only ASCII spans are replaced: the replacement is ASCII too);
//   - the injection scan and the JSON-text scan never throw, and the work stays linear
//     (libFuzzer's -timeout reports a blow-up).
// A violated property aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "util/redaction/json_redaction.hpp"
#include "util/redaction/text_redactor.hpp"
#include "util/utf8.hpp"

namespace {

namespace r = toolport::util::redaction;

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<r::Finding> findings;
    r::find_sensitive(text, r::kAllDetectors, findings);
    std::size_t previous_end = 0;
    for (const auto& f : findings) {
        if (f.begin < previous_end || f.end <= f.begin || f.end > text.size()) violated("findings out of order");
        previous_end = f.end;
    }

    std::string redacted(text);
    const std::size_t replaced = r::redact_text(redacted, r::kAllDetectors);
    if (replaced != findings.size()) violated("redact_text replaced another number of findings");
    if (toolport::util::valid_utf8(text) && !toolport::util::valid_utf8(redacted)) violated("UTF-8 broken");
    // What lies between the findings is kept.
    std::size_t at = 0, out = 0;
    for (const auto& f : findings) {
        const std::string_view kept = text.substr(at, f.begin - at);
        if (redacted.compare(out, kept.size(), kept) != 0) violated("text around a finding changed");
        out += kept.size();
        const std::string replacement = r::replacement(f.detector);
        if (redacted.compare(out, replacement.size(), replacement) != 0) violated("replacement not written");
        out += replacement.size();
        at = f.end;
    }
    if (redacted.compare(out, std::string::npos, text.substr(at)) != 0) violated("tail changed");

    r::InjectionFindings found;
    r::scan_injection(text, found);
    r::scan_json_text_injection(text, found);
    return 0;
}
