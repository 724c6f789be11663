// Markers of prompt injection in text a tool returned: phrases that address the model
// rather than the user ("ignore previous instructions", "you are now a…"), chat-template
// and role tags ("<|im_start|>", "<system>"), "IMPORTANT:" directives to the assistant,
// and characters a reader cannot see (Unicode tag characters U+E0000-U+E007F, zero-width
// and bidi override characters). Found, never removed: the pipeline labels the result
// (pipeline/stages/content_scan.hpp) and the model and the operator decide.
//
//   InjectionFindings found;
//   scan_injection("Ignore all previous instructions and ...", found);
//   found.count(Marker::ignore_instructions)   // 1
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace toolport::util::redaction {

enum class Marker : std::uint8_t {
    ignore_instructions,   // "ignore / disregard / forget (all) (the) previous instructions"
    role_override,         // "you are now a…", "from now on you are", "act as …DAN"
    chat_template,         // "<|im_start|>", "<|system|>", "[INST]", "<<SYS>>"
    role_tag,              // "<system>", "</system>", "<assistant>", "<instructions>", "<IMPORTANT>"
    important_directive,   // "IMPORTANT:" followed by words addressed to the assistant
    hidden_tags,           // Unicode tag characters U+E0000-U+E007F (invisible ASCII)
    invisible_characters,  // zero-width space / joiners between ASCII, word joiner, mid-text BOM
    bidi_override,         // U+202A-U+202E, U+2066-U+2069
};
inline constexpr std::size_t kMarkerCount = 8;

std::string_view name(Marker m);

struct InjectionFindings {
    std::array<std::uint32_t, kMarkerCount> by_marker{};

    std::uint32_t count(Marker m) const { return by_marker[static_cast<std::size_t>(m)]; }
    std::uint32_t total() const;
    bool any() const { return total() != 0; }
    InjectionFindings& operator+=(const InjectionFindings& other);
};

// Adds the markers found in `text` to `found`.
void scan_injection(std::string_view text, InjectionFindings& found);

}  // namespace toolport::util::redaction
