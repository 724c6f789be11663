// The operator's HTTP API over a PinGuard (served at /admin/pins by the HTTP transport,
// and used by the console and `toolport pins --url`):
//   GET  /admin/pins           {"store", "loaded", "sources": [{source, policy, pinned, pending}]}
//   POST /admin/pins/approve   {"source", "name"?, "digest"?} -> {"approved": [records]}
//   POST /admin/pins/reset     {"source", "name"?}            -> {"reset": n}
// `digest` approves only the pending definition with that SHA-256 (or prefix): what the
// operator reviewed, not what an upstream sent since. Errors are {"error": "..."} with 400.
#pragma once

#include <string>
#include <utility>

#include "async/task.hpp"

namespace toolport::pins {

class PinGuard;

Task<std::pair<int, std::string>> answer_pins_api(PinGuard& guard, std::string method, std::string path,
                                                  std::string body, std::string who);

}  // namespace toolport::pins
