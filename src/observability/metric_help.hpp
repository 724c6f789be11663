// The # HELP text of each metric Toolport records, in one place: what a series counts, by
// which labels, and for a gauge of states what each value means. A component may still
// describe() a metric itself (its text wins), but none is ever shown without a help line
// that says what it is.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace toolport::observability {

// The help text of a metric Toolport records, nullopt for any other name.
std::optional<std::string_view> metric_help(std::string_view name);

// Every metric name metric_help() knows.
std::vector<std::string_view> known_metrics();

}  // namespace toolport::observability
