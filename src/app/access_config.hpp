// `access:`: allow and deny rules by principal (auth/access_policy.hpp), read from the file
// (access_config.cpp), and what `toolport config check` and `serve` warn about them.
#pragma once

#include <string>
#include <vector>

#include "app/config.hpp"
#include "config/settings.hpp"

namespace toolport {

// Reads `access:` into config.access (throws config::SettingsError naming file, line and
// key: a rule without an effect, an empty or bracketed pattern, an empty list ...).
void read_access(const config::Settings& root, Config& config);

// The names rules give that this configuration has no source or gateway profile of (a
// source may still come from a flag, an upstream from an import): one line each,
// "FILE:LINE: access.rules[N].sources: ...".
std::vector<std::string> access_warnings(const Config& config);

}  // namespace toolport
