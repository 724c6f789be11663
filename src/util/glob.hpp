// Name patterns as operators write them in the configuration: `*` matches any run of
// characters (none included), `?` exactly one; every other character stands for itself
// (case-sensitive). Used for gateway profiles' and upstreams' tool lists and for access
// rules' tool and principal patterns.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolport::util {

// Whether `text` matches `pattern`. Iterative, with one backtrack point (the last `*`
// seen): linear in practice, never exponential, no allocation.
bool glob_match(std::string_view pattern, std::string_view text);

// Why `pattern` is not one to accept, or nullopt: it is empty, or it uses the brackets or
// braces of richer glob dialects ([a-z], {a,b}), which here would only match themselves.
std::optional<std::string> glob_problem(std::string_view pattern);

}  // namespace toolport::util
