// The `guards:` section: each guard's settings (pipeline/guard.hpp), read and checked.
//
//   guards:
//     pii_check:
//       webhook: {url: https://guard.internal/check, bearer_token_env: GUARD_TOKEN}
//       timeout_ms: 500
//       failure_mode: closed          # open: a guard that gives no verdict lets the call through
//       max_concurrency: 64
//       cache_verdicts_s: 60          # keep verdicts the guard marks cacheable
//       phases: [before, after]
//     interceptors:
//       mcp: {command: node, args: [guard.mjs], interceptors: [pii-redactor]}
//   sources: {tango: {guards: [pii_check]}}
//   tools: {search_vendors: {guards: [interceptors]}}
#pragma once

#include <map>
#include <string>

#include "config/settings.hpp"
#include "pipeline/guard.hpp"

namespace toolport {

// Reads `guards:` from the file's root (throws config::SettingsError naming the line).
std::map<std::string, pipeline::GuardSettings> read_guards(const config::Settings& root);

}  // namespace toolport
