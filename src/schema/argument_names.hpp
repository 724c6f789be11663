// Argument names a tool does not define, and the accepted name a caller most likely meant.
// Models invent parameter names (`start_date` for `award_date_start`, `query` for
// `keyword`, `awardDateStart`, `keywrod`); a refusal that names the closest accepted one
// lets the model fix its call at once.
//
//   auto names = schema::accepted_argument_names(tool.input_schema);   // nullopt: open-ended
//   auto best = schema::closest_names("start_date", *names);          // {"award_date_start"}
//
// Closeness: the names are split into words (snake_case, camelCase, kebab-case, digits),
// plurals folded, and matched word for word — exactly, as synonyms models use for one
// another (query/keyword/search, limit/max/page_size, start/from/since, end/to/until, …),
// as a prefix ("desc" of "description") or with one typo — then weighed by how much of
// each name the matches cover; a misspelt whole name counts by its edit distance.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::schema {

// The argument names `input_schema` accepts (properties of the root, of its allOf / anyOf /
// oneOf branches and of if/then/else), in the schema's order; nullopt when they cannot be
// listed (patternProperties, a schema for additionalProperties, a root $ref).
std::optional<std::vector<std::string>> accepted_argument_names(const nlohmann::json& input_schema);

// How close `given` is to `candidate`, 0 (unrelated) to 1 (the same words).
double name_closeness(std::string_view given, std::string_view candidate);

// The accepted names closest to `given` (more than one when they tie), empty when none is
// close enough to be worth suggesting.
std::vector<std::string> closest_names(std::string_view given, const std::vector<std::string>& accepted);

}  // namespace toolport::schema
