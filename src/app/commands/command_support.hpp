// What the client commands (list, call, test) share: usage errors, and turning the target
// flags (--url with --token/--header, --stdio) into client transport options.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "client/client_transport.hpp"

namespace toolport::commands {

// A problem with what the user typed: reported as is, exit status 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// "Name: value" → {Name, value} (throws UsageError).
std::pair<std::string, std::string> parse_header(const std::string& text);

// --url options: the token from --token, else $TOOLPORT_TOKEN; every --header checked;
// --ca-file for an https server with a private CA. No GET stream: these commands only
// make requests.
client::HttpClientOptions http_options(const std::string& url, const std::string& token,
                                       const std::vector<std::string>& headers, const std::string& ca_file);

// What a running server's operator endpoint (/audit, /orchestration, /admin/pins) answered.
struct OperatorReply {
    int status = 0;
    std::string body;
};

// `method` `path` (with its query) at the origin of `server_url` — whatever path the user
// gave, often the MCP endpoint's, the operator's endpoints are at the root — with the bearer
// token (`token`, else $TOOLPORT_TOKEN) and `body` as JSON when given; one attempt within
// 30 s. Throws std::runtime_error saying what failed (a bad URL as "--url: ...", a refused
// connection), its text sanitized.
OperatorReply call_operator_endpoint(const std::string& server_url, const std::string& token, const std::string& ca_file,
                                     const std::string& method, const std::string& path, const std::string& body = {});

// --stdio 'command args': split into words like a shell would, never run by one
// (throws UsageError for bad quoting or an empty command).
std::vector<std::string> stdio_argv(const std::string& command);

}  // namespace toolport::commands
