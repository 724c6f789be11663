// Internal to the upstream_*.cpp files (not for other folders): the helpers more than
// one of them uses.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "util/json.hpp"

namespace toolport {
class RequestContext;
namespace auth {
class UpstreamCredentials;
}
namespace client {
class HttpAuthorizer;
}
}  // namespace toolport

namespace toolport::gateway::upstream_detail {

// upstream.cpp: how long until `when` (0 when it has passed).
std::chrono::milliseconds until(std::chrono::steady_clock::time_point when);

// upstream_callers.cpp: the authorizer of a connection on `credentials`: the source's own
// token (`subject_token` nullopt: the gateway's connection) or the one exchanged for a
// caller's token.
std::shared_ptr<client::HttpAuthorizer> credentials_authorizer(std::shared_ptr<auth::UpstreamCredentials> credentials,
                                                               std::optional<std::string> subject_token);

// upstream_forwarding.cpp:
// A stateless upstream's questions (an InputRequiredResult's inputRequests) asked of our
// client under the same keys: over its session, or — a stateless client — through our own
// InputRequiredResult (ask_client_all throws InputRequired, which ends the call).
Task<Json> relay_input_requests(RequestContext& ctx, Json requests);

// upstream_tasks.cpp:
// The id of our task a call runs in (server/tasks.cpp runs it as request "task:<id>").
std::string local_task_of(const RequestContext& ctx);

}  // namespace toolport::gateway::upstream_detail
