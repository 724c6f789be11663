// The query string of a console API request: name=value pairs, percent-encoded, with '+'
// for a space as browsers' URLSearchParams write it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolport::console {

using QueryParameters = std::vector<std::pair<std::string, std::string>>;

// The pairs of `query` (without its '?'), in order; nullopt when one is not
// percent-encoded correctly.
std::optional<QueryParameters> parse_query(std::string_view query);

}  // namespace toolport::console
