// The tools of a loaded document: one declaration per operation, whose handler builds the
// request (request_builder), sends it with the shared HTTP client (paced, bounded by the
// call's deadline, cancelled with it) and maps the answer (response_mapping).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "auth/upstream_credentials.hpp"
#include "providers/openapi/operations.hpp"
#include "providers/openapi/request_builder.hpp"
#include "providers/tool_set.hpp"

namespace toolport::openapi {

// What every tool of one document calls with.
struct Api {
    http_client::HttpClient* http = nullptr;
    std::string base_url;
    SecuritySchemes schemes;
    std::string name;  // the source's name: the service of its tools, and how messages name the API
    SecretLookup secret_of;
    // auth: the Authorization header of every call (the caller's exchanged token, or the
    // source's own), kept across reloads of the document.
    std::shared_ptr<auth::UpstreamCredentials> tokens;
    // An answer is read no further than this (the source's max_response_bytes).
    std::size_t max_response_bytes = 8u << 20;
};

// One SyncedTool per operation; `target` carries what the handler sends (method, URL
// template, parameters, body layout, credentials' places), so a change there replaces the
// tool even when what clients see is the same.
std::vector<providers::SyncedTool> make_tools(const std::vector<Operation>& operations, std::shared_ptr<const Api> api);

}  // namespace toolport::openapi
