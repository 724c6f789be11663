#include "protocol/versions.hpp"

#include "protocol/jsonrpc.hpp"

namespace toolport::protocol {

std::optional<Revision> parse_revision(std::string_view text) {
    for (std::size_t i = 0; i < kRevisionNames.size(); ++i) {
        if (kRevisionNames[i] == text) return static_cast<Revision>(i);
    }
    return std::nullopt;
}

std::string_view name(Revision r) { return kRevisionNames[static_cast<std::size_t>(r)]; }

std::string supported_revisions_list() {
    std::string out;
    for (auto n : kRevisionNames) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

int resource_not_found_code(Revision r) {
    return is_stateless(r) ? error_code::kInvalidParams : error_code::kResourceNotFound;
}

}  // namespace toolport::protocol
