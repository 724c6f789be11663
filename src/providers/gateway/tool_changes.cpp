#include "providers/gateway/tool_changes.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/digest.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

namespace {

// The parts of a Tool object a client reads (name is the key, so it never changes here).
constexpr std::string_view kParts[] = {"description", "title", "inputSchema", "outputSchema",
                                       "annotations", "_meta", "execution",   "icons"};
// How much of a changed text is shown.
constexpr std::size_t kExcerptChars = 80;

std::string short_digest(std::string_view text) { return util::sha256_hex(text).substr(0, 8); }

// A part as text: a string as it is, anything else as compact JSON ("" when absent).
std::string text_of(const Json& tool, std::string_view part) {
    if (!tool.is_object()) return {};
    auto it = tool.find(std::string(part));
    if (it == tool.end()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

std::string describe_tool_change(const Json& before, const Json& after) {
    std::vector<std::string> changes;
    for (auto part : kParts) {
        const std::string old_text = text_of(before, part);
        const std::string new_text = text_of(after, part);
        if (old_text == new_text) continue;
        std::string line = fmt::format("{} changed (sha256 {} -> {}, {} -> {} bytes", part,
                                       old_text.empty() ? "none" : short_digest(old_text),
                                       new_text.empty() ? "none" : short_digest(new_text), old_text.size(),
                                       new_text.size());
        // Where the new text starts to differ, a few words of it: enough to see what an
        // upstream slipped in, too little to carry it whole into the log.
        const auto first = std::mismatch(old_text.begin(), old_text.end(), new_text.begin(), new_text.end());
        const std::size_t at = static_cast<std::size_t>(first.second - new_text.begin());
        if (at < new_text.size()) {
            line += fmt::format(", from byte {}: \"{}\"", at,
                                util::sanitize_for_message(std::string_view(new_text).substr(at), kExcerptChars));
        }
        line += ")";
        changes.push_back(std::move(line));
    }
    return fmt::format("{}", fmt::join(changes, "; "));
}

}  // namespace toolport::gateway
